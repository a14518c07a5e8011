// The HTTP server around the app. Node answers some requests itself, before Express sees them: a request
// line and headers over its 16 KB limit (431), bytes that are not HTTP (400), a request that takes too
// long to arrive (408). Those answers carry the error shape too.
import { createServer, STATUS_CODES, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const REFUSALS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'headers_too_large', 'The request line and headers exceed the limit of 16 KB.'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'payload_too_large', 'The chunk extensions of the body exceed their limit.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout', 'The request did not arrive in time.'],
};
const MALFORMED: [number, string, string] = [400, 'bad_request', 'The request is not valid HTTP/1.1.'];
/** How long what the client still sends is read and dropped after the answer, before the socket closes. */
const LINGER_MS = 1_000;

/**
 * Answers what Node refused, as its own default would, unless the connection has gone or an answer to a
 * request on it has begun (on a kept-alive connection, earlier answers are already written).
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket & { _httpMessage?: ServerResponse | null }): void {
  if (err.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, code, message] = REFUSALS[err.code ?? ''] ?? MALFORMED;
  const body = JSON.stringify({ error: { code, message } });
  // Closing with unread bytes (the rest of the request) would reset the connection and could lose the
  // answer at the client: the rest is read and dropped, for a moment, instead of parsed.
  socket.removeAllListeners('data');
  socket.on('data', () => {});
  socket.once('end', () => socket.destroy());
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Cache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function createHttpServer(handler?: RequestListener, options: ServerOptions = {}): Server {
  const server = createServer(options, handler);
  server.on('clientError', answerClientError);
  return server;
}
