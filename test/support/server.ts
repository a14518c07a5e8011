// The real app listening on loopback, for clients that need a socket: a browser, an SDK, a CLI.
import type { AddressInfo } from 'node:net';
import type { Config } from '../../src/config';
import { createHttpServer } from '../../src/http/server';
import { startTestApp, type TestApp, type TestDeps } from './app';

export interface ListeningApp {
  app: TestApp;
  /** The listening origin, which is also the app's BASE_URL unless it was started with another (`calledAs`). */
  url: string;
  close(): Promise<void>;
}

type Overrides = Omit<Partial<Config>, 'host' | 'port' | 'baseUrl'>;

// Cookies, the same-origin check and the issuer derive from BASE_URL, so it must be the origin the client
// sees: the listening one, or `calledAs` when clients reach the app through something in front of it. The
// socket is bound first and the app attached once built: the port is known and never given up.
export async function startListeningApp(overrides: Overrides = {}, deps: TestDeps = {}, { calledAs }: { calledAs?: string } = {}): Promise<ListeningApp> {
  const server = createHttpServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  let app: TestApp;
  try {
    app = await startTestApp({ ...overrides, host: '127.0.0.1', port, baseUrl: new URL(calledAs ?? url) }, deps);
  } catch (error) {
    server.close();
    throw error;
  }
  server.on('request', app.app);

  return {
    app,
    url,
    async close() {
      // A browser keeps idle connections open; close would wait for them.
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
      await app.close();
    },
  };
}
