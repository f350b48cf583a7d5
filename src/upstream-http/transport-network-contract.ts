import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startConnectProxy } from '../../test/support/connect-proxy.js';
import { ok, type TransportContract } from './transport-contract.js';

const basic = (credentials: string): string => `Basic ${Buffer.from(credentials).toString('base64')}`;

/** TLS to the upstream (private CA, host name, client certificate) and the proxy route, through the one connector both transports share. */
export function describeNetworkChecks(contract: TransportContract): void {
  const { row, open, send, succeeded, onCleanUp } = contract;

  describe('TLS', () => {
    it("trusts the endpoint's extra CA only: without it the upstream is refused before anything is sent", async () => {
      contract.upstream.behaviour = (exchange) => ok(exchange);
      const handler = await send(open({}, { ca: null }), { method: 'POST', body: 'must not be sent' });
      expect(handler.errorCode).toBe('SELF_SIGNED_CERT_IN_CHAIN');
      expect(handler.events).toEqual(['error']);
      expect(contract.upstream.requests).toEqual([]);
      await succeeded(open());
      expect(contract.upstream.requests.map(({ httpVersion }) => httpVersion)).toEqual([row.httpVersion]);
    });

    it('refuses a certificate that does not name the host it was reached by', async () => {
      const handler = await send(open({}, {}, new URL(`https://localhost:${contract.upstream.port}`)));
      expect(handler.errorCode).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
      expect(contract.upstream.requests).toEqual([]);
    });

    it('presents the client certificate of cert and key (mTLS), and none without them', async () => {
      contract.upstream.behaviour = (exchange) => ok(exchange);
      const { certificates } = contract;
      await succeeded(
        open({}, { cert: certificates.read(certificates.clientCertFile).toString(), key: certificates.read(certificates.clientKeyFile).toString() }),
      );
      await succeeded(open());
      expect(contract.upstream.requests.map(({ clientCertificate }) => clientCertificate)).toEqual(['switchyard-client', null]);
    });
  });

  describe('proxies', () => {
    it('tunnels an https upstream through a CONNECT proxy with its credentials, TLS end to end, one tunnel per connection', async () => {
      const proxy = await startConnectProxy({ credentials: 'team:s3cret' });
      onCleanUp(() => proxy.close());
      contract.upstream.behaviour = (exchange) => ok(exchange);
      const transport = open({}, { proxy: { http: null, https: proxy.url, noProxy: '' } });
      await succeeded(transport);
      await succeeded(transport);
      expect(proxy.requests).toEqual([{ method: 'CONNECT', target: `127.0.0.1:${contract.upstream.port}`, authorization: basic('team:s3cret') }]);
      expect(contract.upstream.requests.map(({ httpVersion }) => httpVersion)).toEqual([row.httpVersion, row.httpVersion]);
    });

    it('fails the call when the proxy refuses CONNECT, naming the proxy but never its password', async () => {
      const proxy = await startConnectProxy({ credentials: 'team:s3cret' });
      onCleanUp(() => proxy.close());
      const wrong = proxy.url.replace('team:s3cret', 'team:wrong');
      const handler = await send(open({}, { proxy: { http: null, https: wrong, noProxy: '' } }));
      expect(handler.errorCode).toBe('PROXY_REFUSED');
      expect(handler.error?.message).toBe(
        `proxy ${new URL(proxy.url).origin} refused CONNECT to 127.0.0.1:${contract.upstream.port}: HTTP/1.1 407 Proxy Authentication Required`,
      );
      expect(handler.error?.message).not.toMatch(/wrong|team/);
      expect(contract.upstream.connectionCount).toBe(0);
    });

    it('reaches a host NO_PROXY names directly', async () => {
      const proxy = await startConnectProxy({ refuse: true });
      onCleanUp(() => proxy.close());
      contract.upstream.behaviour = (exchange) => ok(exchange);
      await succeeded(open({}, { proxy: { http: proxy.url, https: proxy.url, noProxy: 'example.com, 127.0.0.1' } }));
      expect(proxy.requests).toEqual([]);
    });

    // `http2` applies to https upstreams only (no cleartext h2c): createTransport gives both rows the HTTP/1.1 pool here.
    it('sends the requests of an http upstream to the proxy in absolute form, over HTTP/1.1', async () => {
      const seen: Array<{ url: string | undefined; httpVersion: string }> = [];
      const plain = createServer((request: IncomingMessage, response) => {
        seen.push({ url: request.url, httpVersion: request.httpVersion });
        request.resume();
        response.end('plain');
      });
      await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
      onCleanUp(() => new Promise<void>((resolve) => plain.close(() => resolve())));
      const proxy = await startConnectProxy({ credentials: 'team:s3cret' });
      onCleanUp(() => proxy.close());
      const origin = new URL(`http://127.0.0.1:${(plain.address() as AddressInfo).port}`);
      const handler = await succeeded(open({}, { proxy: { http: proxy.url, https: null, noProxy: '' } }, origin), { path: '/v1/models?page=2' });
      expect(handler.body).toBe('plain');
      expect(proxy.requests).toEqual([{ method: 'GET', target: `${origin.origin}/v1/models?page=2`, authorization: basic('team:s3cret') }]);
      expect(seen).toEqual([{ url: '/v1/models?page=2', httpVersion: '1.1' }]);
    });
  });
}
