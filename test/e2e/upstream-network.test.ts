import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { connect as connectTcp, type AddressInfo, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';
import { makeTestCertificates, opensslMissing, type TestCertificates } from '../support/test-certificates.js';
import { resetCredentials } from '../support/reset-credentials.js';

/**
 * Each upstream's `network` block, against real servers on this machine: an https upstream
 * signed by a private CA that offers HTTP/2 and asks for a client certificate, a plain http
 * upstream, a CONNECT/forward proxy that checks its credentials, and a proxy that refuses.
 */
const COMPLETION = JSON.stringify({
  id: 'c',
  object: 'chat.completion',
  created: 0,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

interface Seen {
  httpVersion: string;
  clientCertificate: string | null;
  authorization: string | undefined;
}

const missing = opensslMissing();
let certificates: TestCertificates;
let tlsUpstream: Http2SecureServer;
let plainUpstream: Server;
let proxy: Server;
let refusingProxy: Server;
let test: TestGateway;
const tlsSeen: Seen[] = [];
const plainSeen: Array<{ url: string | undefined; viaProxy: boolean }> = [];
const proxied: Array<{ method: string; target: string; authorization: string | undefined }> = [];
const refused: string[] = [];
const logLines: Array<Record<string, unknown>> = [];
const sockets = new Set<Socket>();

const portOf = (server: { address(): AddressInfo | string | null }) => (server.address() as AddressInfo).port;
const listen = (server: Server | Http2SecureServer) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const close = (server: Server | Http2SecureServer) => new Promise<void>((resolve) => server.close(() => resolve()));

function answer(response: ServerResponse | Http2ServerResponse): void {
  response.setHeader('content-type', 'application/json');
  response.end(COMPLETION);
}

beforeAll(async () => {
  if (missing !== null) return;
  certificates = makeTestCertificates();
  const { read } = certificates;
  tlsUpstream = createSecureServer(
    {
      allowHTTP1: true,
      key: read(certificates.serverKeyFile),
      cert: read(certificates.serverCertFile),
      ca: read(certificates.caFile),
      requestCert: true,
      rejectUnauthorized: false,
    },
    (request: Http2ServerRequest, response: Http2ServerResponse) => {
      const socket = (request.httpVersion === '2.0' ? request.stream.session?.socket : request.socket) as TLSSocket;
      const peer = socket.getPeerCertificate();
      tlsSeen.push({
        httpVersion: request.httpVersion,
        clientCertificate: socket.authorized && peer.subject !== undefined ? String(peer.subject.CN) : null,
        authorization: request.headers.authorization,
      });
      request.resume();
      request.on('end', () => answer(response));
    },
  );
  tlsUpstream.on('connection', (socket: Socket) => sockets.add(socket));
  plainUpstream = createServer((request, response) => {
    plainSeen.push({ url: request.url, viaProxy: request.headers['x-forwarded-by-test-proxy'] === 'yes' });
    request.resume();
    request.on('end', () => answer(response));
  });
  // A forward proxy for http:// upstreams and a CONNECT tunnel for https:// ones; it wants credentials.
  proxy = createServer((request: IncomingMessage, response: ServerResponse) => {
    proxied.push({ method: request.method ?? '', target: request.url ?? '', authorization: request.headers['proxy-authorization'] });
    const target = new URL(request.url ?? '');
    const { 'proxy-authorization': _credentials, ...headers } = request.headers;
    const forwarded = httpRequest(
      { host: target.hostname, port: target.port, path: target.pathname, method: request.method, headers: { ...headers, 'x-forwarded-by-test-proxy': 'yes' } },
      (upstream) => {
        response.writeHead(upstream.statusCode ?? 502, upstream.headers);
        upstream.pipe(response);
      },
    );
    request.pipe(forwarded);
  });
  proxy.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) => {
    proxied.push({ method: 'CONNECT', target: request.url ?? '', authorization: request.headers['proxy-authorization'] });
    if (request.headers['proxy-authorization'] !== `Basic ${Buffer.from('team:s3cret').toString('base64')}`) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n');
      return;
    }
    const [host, port] = (request.url ?? '').split(':');
    const upstream = connectTcp({ host: host as string, port: Number(port) }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    const drop = (): void => {
      upstream.destroy();
      client.destroy();
    };
    upstream.on('error', drop);
    client.on('error', drop);
    sockets.add(client);
  });
  refusingProxy = createServer();
  refusingProxy.on('connect', (request: IncomingMessage, client: Socket) => {
    refused.push(request.url ?? '');
    client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await Promise.all([listen(tlsUpstream), listen(plainUpstream), listen(proxy), listen(refusingProxy)]);

  const tlsBase = `https://127.0.0.1:${portOf(tlsUpstream)}/v1`;
  const trusted = { ca_file: certificates.caFile, proxy: 'none' };
  test = await startTestGateway(
    {
      upstreams: [
        { id: 'tls-http1', provider: 'openai', base_url: tlsBase, api_key: 'sk-1', network: trusted },
        { id: 'tls-http2', provider: 'openai', base_url: tlsBase, api_key: 'sk-2', network: { ...trusted, http2: true } },
        {
          id: 'tls-client-cert',
          provider: 'openai',
          base_url: tlsBase,
          api_key: 'sk-3',
          network: { ...trusted, cert_file: certificates.clientCertFile, key_file: certificates.clientKeyFile },
        },
        {
          id: 'tls-http2-client-cert',
          provider: 'openai',
          base_url: tlsBase,
          api_key: 'sk-4',
          network: { ...trusted, http2: true, cert_file: certificates.clientCertFile, key_file: certificates.clientKeyFile },
        },
        { id: 'untrusted', provider: 'openai', base_url: tlsBase, api_key: 'sk-5', network: { proxy: 'none' } },
        {
          id: 'tls-via-proxy',
          provider: 'openai',
          base_url: tlsBase,
          api_key: 'sk-6',
          network: { ca_file: certificates.caFile, proxy: `http://team:s3cret@127.0.0.1:${portOf(proxy)}` },
        },
        {
          id: 'tls-http2-via-proxy',
          provider: 'openai',
          base_url: tlsBase,
          api_key: 'sk-7',
          network: { ca_file: certificates.caFile, http2: true, proxy: `http://team:s3cret@127.0.0.1:${portOf(proxy)}` },
        },
        {
          id: 'wrong-proxy-password',
          provider: 'openai',
          base_url: tlsBase,
          api_key: 'sk-8',
          network: { ca_file: certificates.caFile, proxy: `http://team:wrong@127.0.0.1:${portOf(proxy)}` },
        },
        {
          id: 'plain-via-proxy',
          provider: 'openai',
          base_url: `http://127.0.0.1:${portOf(plainUpstream)}/v1`,
          api_key: 'sk-9',
          network: { proxy: `http://team:s3cret@127.0.0.1:${portOf(proxy)}` },
        },
        {
          id: 'behind-refusing-proxy',
          provider: 'openai',
          base_url: tlsBase,
          api_key: 'sk-10',
          network: { ca_file: certificates.caFile, proxy: `http://127.0.0.1:${portOf(refusingProxy)}` },
        },
        // The environment's proxy (below: the refusing one), bypassed for 127.0.0.1 by NO_PROXY.
        { id: 'env-proxy-bypassed', provider: 'openai', base_url: tlsBase, api_key: 'sk-11', network: { ca_file: certificates.caFile } },
        {
          id: 'env-proxy',
          provider: 'openai',
          base_url: `https://localhost:${portOf(tlsUpstream)}/v1`,
          api_key: 'sk-12',
          network: { ca_file: certificates.caFile },
        },
      ],
      models: [
        ...[
          'tls-http1',
          'tls-http2',
          'tls-client-cert',
          'tls-http2-client-cert',
          'untrusted',
          'tls-via-proxy',
          'tls-http2-via-proxy',
          'wrong-proxy-password',
          'plain-via-proxy',
          'behind-refusing-proxy',
          'env-proxy-bypassed',
          'env-proxy',
        ].map((id) => ({
          id,
          type: 'chat',
          routes: [{ upstream: id, model: 'm' }],
        })),
        // The refusing proxy's credential first (almost always), then one that works.
        {
          id: 'failover',
          type: 'chat',
          routes: [
            { upstream: 'behind-refusing-proxy', model: 'm', weight: 100_000 },
            { upstream: 'tls-http1', model: 'm', weight: 1 },
          ],
        },
      ],
    },
    { env: { HTTPS_PROXY: `http://127.0.0.1:${portOf(refusingProxy)}`, NO_PROXY: '127.0.0.1' }, logLines },
  );
});

afterAll(async () => {
  if (missing !== null) return;
  await test?.close();
  for (const socket of sockets) socket.destroy();
  await Promise.all([close(tlsUpstream), close(plainUpstream), close(proxy), close(refusingProxy)]);
  certificates.remove();
});

async function chat(model: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${test.gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${test.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: response.status, text: await response.text() };
}

describe.skipIf(missing !== null)(`upstream network settings${missing === null ? '' : ` (skipped: ${missing})`}`, () => {
  it('trusts an extra CA for one upstream only: without ca_file the same server is refused', async () => {
    tlsSeen.length = 0;
    expect((await chat('tls-http1')).status).toBe(200);
    const refused = await chat('untrusted');
    expect(refused.status).toBe(502);
    expect(JSON.parse(refused.text).error.code).toBe('upstream_error');
    expect(tlsSeen).toEqual([{ httpVersion: '1.1', clientCertificate: null, authorization: 'Bearer sk-1' }]);
  });

  it('speaks HTTP/2 when http2 is true and the upstream offers it, HTTP/1.1 otherwise', async () => {
    tlsSeen.length = 0;
    for (const model of ['tls-http2', 'tls-http1', 'tls-http2']) expect((await chat(model)).status).toBe(200);
    expect(tlsSeen.map(({ httpVersion, authorization }) => [httpVersion, authorization])).toEqual([
      ['2.0', 'Bearer sk-2'],
      ['1.1', 'Bearer sk-1'],
      ['2.0', 'Bearer sk-2'],
    ]);
  });

  it('presents the client certificate of cert_file and key_file (mTLS), over HTTP/1.1 and HTTP/2', async () => {
    tlsSeen.length = 0;
    expect((await chat('tls-client-cert')).status).toBe(200);
    expect((await chat('tls-http2-client-cert')).status).toBe(200);
    expect(tlsSeen.map(({ httpVersion, clientCertificate }) => [httpVersion, clientCertificate])).toEqual([
      ['1.1', 'switchyard-client'],
      ['2.0', 'switchyard-client'],
    ]);
  });

  it('tunnels an https upstream through the proxy with CONNECT and its credentials, TLS end to end', async () => {
    proxied.length = 0;
    tlsSeen.length = 0;
    expect((await chat('tls-via-proxy')).status).toBe(200);
    expect((await chat('tls-http2-via-proxy')).status).toBe(200);
    const authority = `127.0.0.1:${portOf(tlsUpstream)}`;
    const basic = `Basic ${Buffer.from('team:s3cret').toString('base64')}`;
    expect(proxied).toEqual([
      { method: 'CONNECT', target: authority, authorization: basic },
      { method: 'CONNECT', target: authority, authorization: basic },
    ]);
    expect(tlsSeen.map(({ httpVersion }) => httpVersion)).toEqual(['1.1', '2.0']);
  });

  it('sends an http upstream its requests through the proxy in absolute form', async () => {
    proxied.length = 0;
    plainSeen.length = 0;
    expect((await chat('plain-via-proxy')).status).toBe(200);
    expect(proxied).toEqual([
      {
        method: 'POST',
        target: `http://127.0.0.1:${portOf(plainUpstream)}/v1/chat/completions`,
        authorization: `Basic ${Buffer.from('team:s3cret').toString('base64')}`,
      },
    ]);
    expect(plainSeen).toEqual([{ url: '/v1/chat/completions', viaProxy: true }]);
  });

  it('takes the proxy from the environment with proxy: env (the default), and honours NO_PROXY', async () => {
    tlsSeen.length = 0;
    refused.length = 0;
    // NO_PROXY names 127.0.0.1: straight to the upstream.
    expect((await chat('env-proxy-bypassed')).status).toBe(200);
    expect(tlsSeen).toHaveLength(1);
    expect(refused).toEqual([]);
    // localhost is not in NO_PROXY: through HTTPS_PROXY (which refuses).
    expect((await chat('env-proxy')).status).toBe(502);
    expect(refused).toEqual([`localhost:${portOf(tlsUpstream)}`]);
    expect(tlsSeen).toHaveLength(1);
  });

  it('treats a proxy that refuses as a connect failure: failover applies, the log names the proxy, the caller never sees it', async () => {
    const before = logLines.length;
    for (let request = 0; request < 3; request++) expect((await chat('failover')).status).toBe(200);
    const refusingAddress = `127.0.0.1:${portOf(refusingProxy)}`;
    const warnings = logLines.slice(before).filter((line) => line['msg'] === 'upstream attempt failed');
    expect(warnings.length).toBeGreaterThan(0);
    for (const warning of warnings) {
      expect(warning).toMatchObject({ credential: 'behind-refusing-proxy', code: 'upstream_error', class: 'connect' });
      expect(String(warning['cause'])).toContain(`proxy http://${refusingAddress} refused CONNECT to 127.0.0.1:${portOf(tlsUpstream)}: HTTP/1.1 403 Forbidden`);
    }
    // The refusing proxy's credential cools after its failure; an operator's reset ends that.
    resetCredentials(test.gateway);
    for (const model of ['behind-refusing-proxy', 'wrong-proxy-password']) {
      const failed = await chat(model);
      expect(failed.status).toBe(502);
      expect(JSON.parse(failed.text).error.code).toBe('upstream_error');
      expect(failed.text).not.toMatch(/proxy|127\.0\.0\.1|s3cret|wrong|team/i);
    }
    // The proxy's password is never logged.
    expect(JSON.stringify(logLines)).not.toMatch(/s3cret|team:wrong/);
  });
});
