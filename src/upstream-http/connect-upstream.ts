import { connect as connectTcp, isIP, type Socket } from 'node:net';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';

/** Why a connection could not be opened, beside Node's own codes (ECONNREFUSED, cert errors…). */
export class ConnectError extends Error {
  constructor(
    readonly code: 'UPSTREAM_CONNECT_TIMEOUT' | 'PROXY_REFUSED' | 'PROXY_UNREACHABLE' | 'PROXY_PROTOCOL',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ConnectError';
  }
}

/** What TLS to an upstream trusts and presents: CAs (the system's plus extra ones), a client certificate. */
export interface UpstreamTls {
  readonly ca?: readonly string[];
  readonly cert?: string;
  readonly key?: string;
}

export interface ConnectTarget {
  readonly host: string;
  readonly port: number;
  /** https: TLS to the upstream (inside the tunnel when there is a proxy). */
  readonly secure: boolean;
  /** ALPN protocols offered, in order of preference. */
  readonly alpn: readonly string[];
  readonly tls: UpstreamTls;
  /**
   * The proxy to go through, or null. An https upstream is reached through a CONNECT tunnel; for
   * an http upstream the connection to the proxy is returned as is (the requests then name the
   * upstream in absolute form, see `forwardProxy` in the HTTP/1.1 pool).
   */
  readonly proxy: URL | null;
  /** For the whole of it: proxy, tunnel and TLS handshake. */
  readonly timeoutMs: number;
}

/** Longest answer a proxy may give to CONNECT before its blank line. */
const MAX_PROXY_HEAD_BYTES = 16 * 1024;

/**
 * Opens a connection ready to carry HTTP to `target`, calling `done` exactly once: with the
 * socket once it is connected (for https, once TLS is established and the certificate verified),
 * or with why not. Errors that concern a proxy name it (without its password), for the log; the
 * gateway's callers only ever see `upstream_error`.
 */
export function connectUpstream(target: ConnectTarget, done: (error: Error | null, socket: Socket | null) => void): void {
  let finished = false;
  let current: Socket | null = null;
  const via = target.proxy === null ? '' : ` through proxy ${describeProxy(target.proxy)}`;
  const timer = setTimeout(() => {
    fail(new ConnectError('UPSTREAM_CONNECT_TIMEOUT', `connecting to ${target.host}:${target.port}${via} took over ${target.timeoutMs} ms`));
  }, target.timeoutMs);

  const finish = (socket: Socket): void => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    socket.removeListener('error', fail);
    done(null, socket);
  };
  function fail(error: Error): void {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    current?.destroy();
    done(error, null);
  }
  const follow = (socket: Socket): Socket => {
    current?.removeListener('error', fail);
    current = socket;
    socket.on('error', fail);
    return socket;
  };

  const { proxy } = target;
  if (proxy === null) {
    const socket = follow(target.secure ? connectTls(tlsOptions(target)) : connectTcp({ host: target.host, port: target.port }));
    socket.once(target.secure ? 'secureConnect' : 'connect', () => finish(socket));
    return;
  }
  const proxyHost = bareHost(proxy.hostname);
  const proxyPort = proxy.port === '' ? (proxy.protocol === 'https:' ? 443 : 80) : Number(proxy.port);
  const toProxy =
    proxy.protocol === 'https:'
      ? connectTls({ host: proxyHost, port: proxyPort, servername: serverName(proxyHost) })
      : connectTcp({ host: proxyHost, port: proxyPort });
  // Until the proxy is reached, a failure is the proxy's, and the log says so.
  const proxyFailed = (error: Error): void =>
    fail(new ConnectError('PROXY_UNREACHABLE', `proxy ${describeProxy(proxy)} could not be reached: ${error.message}`, { cause: error }));
  current = toProxy;
  toProxy.on('error', proxyFailed);
  toProxy.once(proxy.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
    toProxy.removeListener('error', proxyFailed);
    follow(toProxy);
    if (!target.secure) return finish(toProxy);
    tunnel(toProxy, target, proxy, (error) => {
      if (error !== null) return fail(error);
      const socket = follow(connectTls({ ...tlsOptions(target), socket: toProxy }));
      socket.once('secureConnect', () => finish(socket));
    });
  });
}

/** Asks the proxy for a tunnel to the upstream and reads its answer head. */
function tunnel(socket: Socket, target: ConnectTarget, proxy: URL, then: (error: Error | null) => void): void {
  const authority = `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
  const authorization = proxyAuthorization(proxy);
  socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n${authorization === null ? '' : `proxy-authorization: ${authorization}\r\n`}\r\n`);
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end === -1) {
      if (head.length > MAX_PROXY_HEAD_BYTES)
        stop(new ConnectError('PROXY_PROTOCOL', `proxy ${describeProxy(proxy)} sent no end to its answer to CONNECT within ${MAX_PROXY_HEAD_BYTES} bytes`));
      return;
    }
    const statusLine = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
    if (status === undefined)
      return stop(new ConnectError('PROXY_PROTOCOL', `proxy ${describeProxy(proxy)} answered CONNECT with "${statusLine.slice(0, 100)}"`));
    if (status[0] !== '2')
      return stop(new ConnectError('PROXY_REFUSED', `proxy ${describeProxy(proxy)} refused CONNECT to ${authority}: ${statusLine.slice(0, 100)}`));
    // The upstream speaks first only after our TLS hello: anything more is not from it.
    if (end + 4 !== head.length) return stop(new ConnectError('PROXY_PROTOCOL', `proxy ${describeProxy(proxy)} sent bytes after its answer to CONNECT`));
    stop(null);
  };
  const stop = (error: Error | null): void => {
    socket.removeListener('data', onData);
    socket.pause();
    then(error);
  };
  socket.on('data', onData);
}

function tlsOptions(target: ConnectTarget): ConnectionOptions {
  const host = bareHost(target.host);
  return {
    host,
    port: target.port,
    servername: serverName(host),
    ALPNProtocols: [...target.alpn],
    ...(target.tls.ca === undefined ? {} : { ca: [...target.tls.ca] }),
    ...(target.tls.cert === undefined ? {} : { cert: target.tls.cert, key: target.tls.key }),
  };
}

/** SNI takes a name, never an address. */
function serverName(host: string): string | undefined {
  return isIP(host) === 0 ? host : undefined;
}

function bareHost(hostname: string): string {
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

/** `Basic …` from the proxy URL's user and password, or null. */
export function proxyAuthorization(proxy: URL): string | null {
  if (proxy.username === '' && proxy.password === '') return null;
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return `Basic ${Buffer.from(credentials).toString('base64')}`;
}

/** The proxy for a log line: its origin, never its user or password. */
export function describeProxy(proxy: URL): string {
  return `${proxy.protocol}//${proxy.host}`;
}
