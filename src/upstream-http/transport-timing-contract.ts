import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ClockedHandler, ok, waitFor, type TransportContract } from './transport-contract.js';

/**
 * The upstream client's first-byte, idle and total clocks and its caps run above the transport,
 * on the events it tells (sent, start, data) and with `abort`: each case runs them as the client
 * does (ClockedHandler) and checks what the transport did. The connect timeout is the transport's own.
 */
export function describeTimingChecks(contract: TransportContract): void {
  const { per, open, start, send, succeeded, holdRequests, onCleanUp } = contract;

  describe('caps and timeouts (the upstream client runs the clocks and caps over the transport)', () => {
    const limits = { firstByteMs: 250, idleMs: 200, totalMs: 5_000 };

    it('first byte: a silent upstream is aborted at the deadline and sees its exchange cancelled', async () => {
      const held = holdRequests();
      const transport = open();
      const handler = start(transport, {}, new ClockedHandler(limits));
      await handler.settled;
      expect(handler.error?.message).toBe('first byte timeout');
      expect(handler.events).toEqual(['sent', 'error']);
      expect(handler.settledAt - (handler.sentAt.at(-1) as number)).toBeGreaterThanOrEqual(limits.firstByteMs - 1);
      await held[0]?.cancelled;
      // HTTP/1.1 closes the connection (a half-done exchange cannot be reused); HTTP/2 resets the stream only.
      await waitFor(() => contract.upstream.openConnections === per({ http1: 0, http2: 1 }), 'the connection to be closed or kept');
      contract.upstream.behaviour = (exchange) => ok(exchange);
      await succeeded(transport);
      expect(contract.upstream.connectionCount).toBe(per({ http1: 2, http2: 1 }));
    });

    it('idle: a body that goes silent is aborted idleMs after its last chunk', async () => {
      contract.upstream.behaviour = ({ response }) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('data: one\n\n');
      };
      const handler = start(open(), {}, new ClockedHandler(limits));
      await handler.settled;
      expect(handler.error?.message).toBe('idle timeout');
      expect(handler.events).toEqual(['sent', 'start', 'data', 'error']);
      expect(handler.body).toBe('data: one\n\n');
    });

    it('idle: a body whose chunks keep coming runs past idleMs, each chunk delivered as it arrives', async () => {
      contract.upstream.behaviour = ({ response }) => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        let sent = 0;
        const timer = setInterval(() => {
          response.write(`${sent},`);
          if (++sent === 8) {
            clearInterval(timer);
            response.end();
          }
        }, limits.idleMs / 4);
      };
      const handler = start(open(), {}, new ClockedHandler(limits));
      await handler.settled;
      expect(handler.error).toBeNull();
      expect(handler.body).toBe('0,1,2,3,4,5,6,7,');
      expect(handler.chunks.length).toBeGreaterThanOrEqual(4);
    });

    it('total: a body that never stalls is aborted at the total deadline', async () => {
      contract.upstream.behaviour = ({ response }) => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => response.write('tick,'), 20);
        response.on('close', () => clearInterval(timer));
      };
      const handler = start(open(), {}, new ClockedHandler({ ...limits, totalMs: 300 }));
      await handler.settled;
      expect(handler.error?.message).toBe('total timeout');
      // Data kept coming (HTTP/2 may carry several writes in one frame): only the total could run out.
      expect(handler.chunks.length).toBeGreaterThanOrEqual(2);
    });

    it('response cap: a caller that aborts past its cap gets nothing more, and the transport serves the next call', async () => {
      const held = holdRequests();
      contract.upstream.behaviour = (exchange) => {
        held.push(exchange);
        exchange.response.writeHead(200, { 'content-type': 'application/octet-stream' });
        const timer = setInterval(() => exchange.response.write(Buffer.alloc(16 * 1024, 'x')), 2);
        exchange.response.on('close', () => clearInterval(timer));
      };
      const transport = open();
      const cap = 100 * 1024;
      const handler = start(transport);
      handler.onData = () => {
        if (handler.bytes > cap) handler.call?.abort(new Error(`larger than ${cap} bytes`));
      };
      await handler.settled;
      expect(handler.error?.message).toBe(`larger than ${cap} bytes`);
      const bytesAtAbort = handler.bytes;
      await held[0]?.cancelled;
      await sleep(30);
      expect(handler.bytes).toBe(bytesAtAbort);
      expect(handler.events.at(-1)).toBe('error');
      contract.upstream.behaviour = (exchange) => ok(exchange);
      await succeeded(transport);
      expect(contract.upstream.connectionCount).toBe(per({ http1: 2, http2: 1 }));
    });

    it('response head cap: a head of 60 KiB is read, one of 80 KiB fails the call (both stop near 64 KiB)', async () => {
      contract.upstream.behaviour = (exchange) => {
        exchange.response.writeHead(200, { 'x-large': 'h'.repeat((exchange.seen.path === '/large' ? 80 : 60) * 1024) });
        exchange.response.end('body');
      };
      const transport = open();
      expect((await succeeded(transport, { path: '/fits' })).body).toBe('body');
      const handler = await send(transport, { path: '/large' });
      expect(handler.events).toEqual(['sent', 'error']);
      // The codes differ: the in-house parser's protocol error, node:http2's stream error.
      expect(handler.errorCode).toBe(per({ http1: 'HTTP1_PROTOCOL', http2: 'ERR_HTTP2_STREAM_ERROR' }));
    });

    it('connect timeout: a TLS handshake that never completes fails within connectTimeoutMs', async () => {
      // Accepts the TCP connection and never says a word: a TLS connect is done only at secureConnect.
      const accepted: Socket[] = [];
      const silent = createNetServer((socket) => accepted.push(socket.on('error', () => undefined)));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      onCleanUp(() => {
        for (const socket of accepted) socket.destroy();
        return new Promise((resolve) => silent.close(() => resolve()));
      });
      const received: Buffer[] = [];
      silent.on('connection', (socket) => socket.on('data', (data: Buffer) => received.push(data)));
      const started = performance.now();
      const handler = await send(open({ connectTimeoutMs: 100 }, {}, new URL(`https://127.0.0.1:${(silent.address() as AddressInfo).port}`)));
      expect(handler.errorCode).toBe('UPSTREAM_CONNECT_TIMEOUT');
      expect(handler.error?.message).toMatch(/took over 100 ms/);
      // The client's ClientHello reached the server: the TCP connect itself had succeeded.
      expect(received[0]?.[0]).toBe(0x16);
      expect(handler.events).toEqual(['error']);
      expect(performance.now() - started).toBeGreaterThanOrEqual(95);
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(accepted).toHaveLength(1);
    });
  });
}
