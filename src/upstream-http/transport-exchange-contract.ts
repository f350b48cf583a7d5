import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { afterBody, ok, waitFor, type TransportContract } from './transport-contract.js';

/** What a call carries and gets back, and how connections are kept for the next one. */
export function describeExchangeChecks(contract: TransportContract): void {
  const { row, per, open, start, succeeded, holdRequests } = contract;

  describe('requests and responses', () => {
    it('carries a POST (method, path, headers, body) and delivers the status, headers and body', async () => {
      contract.upstream.behaviour = afterBody(({ response }, body) => {
        response.writeHead(201, { 'content-type': 'application/json', 'x-answer': '42', 'set-cookie': ['a=1', 'b=2'] });
        response.end(`{"received":${JSON.stringify(body.toString())}}`);
      });
      const body = '{"text":"héllo ✓"}';
      const handler = await succeeded(open(), {
        method: 'POST',
        path: '/v1/things?limit=1',
        headers: { 'content-type': 'application/json', authorization: 'Bearer secret', 'X-Custom': 'value' },
        body,
      });
      const [seen] = contract.upstream.requests;
      expect(seen).toMatchObject({ method: 'POST', path: '/v1/things?limit=1', httpVersion: row.httpVersion });
      // The length is the transport's, counted in bytes.
      expect(Buffer.byteLength(body)).toBeGreaterThan(body.length);
      expect(seen?.headers).toMatchObject({
        'content-type': 'application/json',
        authorization: 'Bearer secret',
        'x-custom': 'value',
        'content-length': String(Buffer.byteLength(body)),
      });
      expect(seen?.headers['transfer-encoding']).toBeUndefined();
      expect(seen?.headers[row.http2 ? ':authority' : 'host']).toBe(`127.0.0.1:${contract.upstream.port}`);
      expect(handler.statusCode).toBe(201);
      expect(handler.head?.headers).toMatchObject({ 'content-type': 'application/json', 'x-answer': '42', 'set-cookie': ['a=1', 'b=2'] });
      expect(JSON.parse(handler.body)).toEqual({ received: body });
      expect(handler.events).toEqual(['sent', 'start', 'data', 'end']);
    });

    it("sends each call's own traceparent beside one shared headers object", async () => {
      const transport = open();
      const headers = { 'content-type': 'application/json' };
      const traceparents = ['00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00'];
      for (const traceparent of traceparents) await succeeded(transport, { method: 'POST', headers, traceparent, body: '{}' });
      await succeeded(transport, { method: 'POST', headers, body: '{}' });
      expect(contract.upstream.requests.map((request) => request.headers['traceparent'])).toEqual([...traceparents, undefined]);
    });

    it('streams a Readable upload and tells onRequestSent with each chunk (the first-byte clock restarts)', async () => {
      contract.upstream.behaviour = afterBody((exchange, body) => ok(exchange, String(body.length)));
      async function* slowly(): AsyncGenerator<Buffer> {
        for (let part = 0; part < 4; part++) {
          yield Buffer.alloc(1_000, 1);
          await sleep(60);
        }
      }
      const handler = await succeeded(open(), { method: 'POST', headers: { 'content-length': '4000' }, body: Readable.from(slowly()) });
      expect(handler.body).toBe('4000');
      expect(contract.upstream.requests[0]?.headers['content-length']).toBe('4000');
      expect(contract.upstream.requests[0]?.headers['transfer-encoding']).toBeUndefined();
      expect(handler.sentAt.length).toBeGreaterThanOrEqual(4);
      // The last send is told when the last chunk goes, not when the upload began.
      expect(handler.sentAt.at(-1)).toBeGreaterThanOrEqual(170);
    });
  });

  describe('keep-alive', () => {
    it('serves sequential calls on one kept-alive connection', async () => {
      contract.upstream.behaviour = (exchange) => ok(exchange, exchange.seen.path);
      const transport = open();
      for (let index = 0; index < 20; index++) expect((await succeeded(transport, { path: `/call/${index}` })).body).toBe(`/call/${index}`);
      expect(contract.upstream.requests.map(({ httpVersion }) => httpVersion)).toEqual(Array(20).fill(row.httpVersion));
      expect(contract.upstream.connectionCount).toBe(1);
      expect(contract.upstream.openConnections).toBe(1);
    });

    // undici's Pool runs with `pipelining: 1`: over HTTP/2 too, one stream at a time per connection.
    it('serves concurrent calls on up to maxConnections connections, one call each, the rest waiting in order', async () => {
      const held = holdRequests();
      const transport = open({ maxConnections: 2 });
      const calls = Array.from({ length: 4 }, (_, index) => start(transport, { path: `/concurrent/${index}` }));
      await waitFor(() => held.length === 2, 'two calls to reach the upstream');
      await sleep(30);
      expect(held.map(({ seen }) => seen.path)).toEqual(['/concurrent/0', '/concurrent/1']);
      for (const exchange of held.splice(0)) ok(exchange, exchange.seen.path);
      await waitFor(() => held.length === 2, 'the two waiting calls to reach the upstream');
      for (const exchange of held.splice(0)) ok(exchange, exchange.seen.path);
      await Promise.all(calls.map(({ settled }) => settled));
      expect(calls.map(({ body }) => body)).toEqual(['/concurrent/0', '/concurrent/1', '/concurrent/2', '/concurrent/3']);
      expect(contract.upstream.connectionCount).toBe(2);
    });

    it(`${row.http2 ? 'keeps an idle connection past keepAliveMs (undici applies it to HTTP/1.1 only)' : 'closes a connection left idle for keepAliveMs'}, and serves the next call`, async () => {
      contract.upstream.behaviour = (exchange) => ok(exchange);
      const transport = open({ keepAliveMs: 150 });
      await succeeded(transport);
      expect(contract.upstream.openConnections).toBe(1);
      if (row.http2) await sleep(600);
      else await waitFor(() => contract.upstream.openConnections === 0, 'the idle connection to be closed', 3_000);
      expect(contract.upstream.openConnections).toBe(per({ http1: 0, http2: 1 }));
      await succeeded(transport);
      expect(contract.upstream.connectionCount).toBe(per({ http1: 2, http2: 1 }));
    });

    it('opens a new connection when the upstream closed the idle one', async () => {
      contract.upstream.behaviour = (exchange) => ok(exchange);
      const transport = open();
      await succeeded(transport);
      contract.upstream.endConnections();
      await waitFor(() => contract.upstream.openConnections === 0, 'the upstream to close its idle connection');
      await sleep(20);
      expect((await succeeded(transport)).body).toBe('ok');
      expect(contract.upstream.connectionCount).toBe(2);
    });
  });
}
