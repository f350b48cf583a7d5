import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

/** What the proxy was asked: CONNECT with its authority, or a request in absolute form. */
export interface ProxiedRequest {
  method: string;
  target: string;
  authorization: string | undefined;
}

export interface ConnectProxy {
  /** `http://127.0.0.1:PORT` (with the credentials it wants, if any). */
  readonly url: string;
  readonly requests: ProxiedRequest[];
  close(): Promise<void>;
}

/**
 * An HTTP proxy on this machine: CONNECT tunnels (for https upstreams) and requests in absolute
 * form (for http ones). With `credentials` (`user:password`) it answers 407 to a request without
 * them; with `refuse` it answers every CONNECT 403.
 */
export async function startConnectProxy({ credentials, refuse = false }: { credentials?: string; refuse?: boolean } = {}): Promise<ConnectProxy> {
  const requests: ProxiedRequest[] = [];
  const sockets = new Set<Socket>();
  const expected = credentials === undefined ? undefined : `Basic ${Buffer.from(credentials).toString('base64')}`;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    requests.push({ method: request.method ?? '', target: request.url ?? '', authorization: request.headers['proxy-authorization'] });
    if (request.headers['proxy-authorization'] !== expected) {
      response.writeHead(407).end();
      return;
    }
    const target = new URL(request.url ?? '');
    const { 'proxy-authorization': _credentials, ...headers } = request.headers;
    const forwarded = httpRequest(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, method: request.method, headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => response.destroy());
    request.pipe(forwarded);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) => {
    requests.push({ method: 'CONNECT', target: request.url ?? '', authorization: request.headers['proxy-authorization'] });
    client.on('error', () => client.destroy());
    if (refuse) return void client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    if (request.headers['proxy-authorization'] !== expected) return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n');
    const [host = '', port = ''] = (request.url ?? '').split(':');
    const upstream = connect({ host, port: Number(port) }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    const drop = (): void => {
      upstream.destroy();
      client.destroy();
    };
    upstream.on('error', drop).on('close', drop);
    client.on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${credentials === undefined ? '' : `${credentials}@`}127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
