import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy between RedisState and Redis that can lose the connection the ways a network does:
 * `cut` resets every connection and refuses new ones; `stall` stops carrying data on the open
 * ones, as a host that vanished without a reset would, and refuses new ones; `restore` carries
 * new connections again.
 */
export class CuttableProxy {
  private mode: 'carry' | 'refuse' = 'carry';
  private readonly pairs = new Set<[Socket, Socket]>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(redisUrl: string): Promise<CuttableProxy> {
    const target = new URL(redisUrl);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
    // The same credentials and database, through the proxy's port.
    const proxied = new URL(redisUrl);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(address.port);
    const proxy = new CuttableProxy(server, proxied.toString());
    server.on('connection', (client) => proxy.accept(client, target.hostname.replace(/^\[|\]$/g, ''), Number(target.port || 6379)));
    return proxy;
  }

  cut(): void {
    this.mode = 'refuse';
    for (const pair of this.pairs) for (const socket of pair) socket.destroy();
    this.pairs.clear();
  }

  stall(): void {
    this.mode = 'refuse';
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  restore(): void {
    this.mode = 'carry';
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: Socket, host: string, port: number): void {
    if (this.mode === 'refuse') {
      client.destroy();
      return;
    }
    const upstream = connect(port, host);
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    const end = (): void => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of pair) socket.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
