// A TCP forwarder on loopback in front of a real server, which a test can cut and restore: while cut,
// every open connection is reset and new ones are refused at once, as when the server went down.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpCut {
  port: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpCut(target: { host: string; port: number }): Promise<TcpCut> {
  const open = new Set<Socket>();
  let down = false;
  const server = createServer((client) => {
    if (down) return void client.resetAndDestroy();
    const upstream = connect(target.port, target.host);
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      open.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        open.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    down = true;
    for (const socket of open) socket.resetAndDestroy();
  };
  return {
    port: (server.address() as AddressInfo).port,
    cut,
    restore() {
      down = false;
    },
    async close() {
      cut();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
