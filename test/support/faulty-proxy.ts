import { connect, createServer, type Server, type Socket } from 'node:net';

type Mode = { kind: 'carry' } | { kind: 'delay'; ms: number } | { kind: 'blackhole' } | { kind: 'stall' } | { kind: 'refuse' };

/**
 * A TCP proxy in front of a server (Redis, PostgreSQL, an upstream) that can be made slow,
 * silent or cut while the suite runs, on the connections already open as on new ones:
 * - `slow(ms)`: every chunk, each way, is carried `ms` later (order kept): a distant server;
 * - `blackhole()`: connections stay open and accepted, nothing is carried either way: a host that
 *   vanished without a reset (what is sent meanwhile is lost, so a connection that lived through
 *   it is broken for its protocol once carried again: clients must drop it, as they would);
 * - `stall()`: the connections open now never carry anything again, and new ones are refused: a
 *   host that vanished, seen by a client that reconnects (its new connection fails rather than hangs);
 * - `cut()`: every connection is reset and new ones are refused: a crash or a firewall;
 * - `restore()`: carried at once again.
 */
export class FaultyProxy {
  private mode: Mode = { kind: 'carry' };
  private readonly pairs = new Set<[Socket, Socket]>();
  /** Sockets of connections a stall left dead: kept open, never carried again. */
  private readonly stalled = new WeakSet<Socket>();
  private targetUrl: string | undefined;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** A proxy in front of the server of `url` (redis://, postgres://); `url` is then the same URL through it. */
  static async inFrontOf(url: string): Promise<FaultyProxy> {
    const target = new URL(url);
    const proxy = await FaultyProxy.start(Number(target.port), target.hostname.replace(/^\[|\]$/g, ''));
    proxy.targetUrl = url;
    return proxy;
  }

  /** The URL given to {@link inFrontOf}, through the proxy. */
  get url(): string {
    if (this.targetUrl === undefined) throw new Error('the proxy was started without a URL: use proxied(url)');
    return this.proxied(this.targetUrl);
  }

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<FaultyProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
    const proxy = new FaultyProxy(server, address.port);
    server.on('connection', (client) => proxy.accept(client, targetHost, targetPort));
    return proxy;
  }

  /** The same URL with the proxy's host and port (for redis:// and postgres:// URLs). */
  proxied(url: string): string {
    const through = new URL(url);
    through.hostname = '127.0.0.1';
    through.port = String(this.port);
    return through.toString();
  }

  slow(ms: number): void {
    this.mode = { kind: 'delay', ms };
  }

  blackhole(): void {
    this.mode = { kind: 'blackhole' };
  }

  stall(): void {
    this.mode = { kind: 'stall' };
    for (const pair of this.pairs) for (const socket of pair) this.stalled.add(socket);
  }

  cut(): void {
    this.mode = { kind: 'refuse' };
    for (const pair of this.pairs) for (const socket of pair) socket.destroy();
    this.pairs.clear();
  }

  restore(): void {
    this.mode = { kind: 'carry' };
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: Socket, host: string, port: number): void {
    if (this.mode.kind === 'refuse' || this.mode.kind === 'stall') {
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
    this.carry(client, upstream);
    this.carry(upstream, client);
  }

  private carry(from: Socket, to: Socket): void {
    from.on('data', (chunk: Buffer) => {
      const mode = this.mode;
      if (mode.kind === 'blackhole' || mode.kind === 'stall' || mode.kind === 'refuse' || this.stalled.has(from)) return;
      if (mode.kind === 'carry') {
        to.write(chunk);
        return;
      }
      // Timers of equal delay fire in the order they were set, so the stream keeps its order.
      setTimeout(() => {
        if (!to.destroyed) to.write(chunk);
      }, mode.ms);
    });
  }
}
