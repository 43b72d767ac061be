/**
 * A TCP proxy a test puts between the service and PostgreSQL (or any TCP server) and cuts to
 * simulate the server restarting: open connections reset, new ones refused, until restored.
 */
import net from 'node:net';

export /** A TCP proxy to `target` on a fixed local port that can be cut and restored. */
class CuttableProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Resets every open connection and refuses new ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.resetAndDestroy();
    await new Promise((resolve) => server?.close(resolve));
  }
}

/** `url` (a database URL) with the proxy as its host. */
export function routedThrough(proxy: CuttableProxy, url: string): string {
  const routed = new URL(url);
  routed.hostname = '127.0.0.1';
  routed.port = String(proxy.port);
  return routed.toString();
}

/** A proxy to the test PostgreSQL server, open. */
export async function proxyToTestDatabase(): Promise<CuttableProxy> {
  const server = new URL(process.env.TEST_PG_SERVER_URL!);
  const proxy = new CuttableProxy({ host: server.hostname, port: Number(server.port || 5432) });
  await proxy.open();
  return proxy;
}
