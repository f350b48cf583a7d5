import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ok, waitFor, type TransportContract } from './transport-contract.js';

/** Endless 64 KiB chunks, counting what was produced: an upload the upstream may never read. */
function endlessUpload(): { body: Readable; produced: () => number } {
  let produced = 0;
  async function* endless(): AsyncGenerator<Buffer> {
    for (;;) {
      produced += 64 * 1024;
      yield Buffer.alloc(64 * 1024, 'x');
      await sleep(1);
    }
  }
  return { body: Readable.from(endless()), produced: () => produced };
}

/** Aborts, pause and resume, an upstream that fails or misbehaves, and closing the transport. */
export function describeFaultChecks(contract: TransportContract): void {
  const { per, open, start, send, succeeded, holdRequests, close } = contract;

  describe('aborts', () => {
    it('an abort before the call was sent: the upstream never sees it, and the transport serves the next call', async () => {
      contract.upstream.behaviour = (exchange) => ok(exchange);
      const transport = open();
      const aborted = start(transport, { path: '/never' });
      const reason = new Error('changed my mind');
      aborted.call?.abort(reason);
      await aborted.settled;
      expect(aborted.error).toBe(reason);
      expect(aborted.events).toEqual(['error']);
      await succeeded(transport, { path: '/after' });
      await sleep(20);
      expect(contract.upstream.requests.map(({ path }) => path)).toEqual(['/after']);
    });

    it('an abort while the head is awaited: the handler gets that error once, later aborts change nothing, the upstream sees the exchange cancelled', async () => {
      const held = holdRequests();
      const transport = open();
      const handler = start(transport, { path: '/held' });
      await waitFor(() => held.length === 1, 'the request to reach the upstream');
      const reason = new Error('the client went away');
      handler.call?.abort(reason);
      await handler.settled;
      handler.call?.abort(new Error('again'));
      await held[0]?.cancelled;
      expect(handler.error).toBe(reason);
      expect(handler.events).toEqual(['sent', 'error']);
      // HTTP/1.1 closes the connection (a half-done exchange cannot be reused); HTTP/2 resets the stream only.
      await waitFor(() => contract.upstream.openConnections === per({ http1: 0, http2: 1 }), 'the connection to be closed or kept');
    });

    it('an abort in the middle of the body: nothing more is delivered, and the upstream sees the exchange cancelled', async () => {
      const held = holdRequests();
      contract.upstream.behaviour = (exchange) => {
        held.push(exchange);
        exchange.response.writeHead(200, { 'content-type': 'text/plain' });
        exchange.response.write('partial');
      };
      const handler = start(open());
      handler.onData = () => handler.call?.abort(new Error('enough'));
      await handler.settled;
      await held[0]?.cancelled;
      expect(handler.error?.message).toBe('enough');
      expect(handler.events).toEqual(['sent', 'start', 'data', 'error']);
      expect(handler.body).toBe('partial');
    });
  });

  describe('pause and resume', () => {
    it('pause() stops the delivery of a body and resume() restarts it, nothing lost', async () => {
      let written = 0;
      contract.upstream.behaviour = ({ response }) => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => {
          response.write(`${written},`);
          if (++written === 10) {
            clearInterval(timer);
            response.end();
          }
        }, 15);
      };
      const handler = start(open());
      handler.onData = () => {
        if (handler.chunks.length === 1) handler.call?.pause();
      };
      await waitFor(() => handler.chunks.length === 1, 'the first body chunk');
      expect(handler.call?.paused).toBe(true);
      const writtenAtPause = written;
      await waitFor(() => written >= writtenAtPause + 4, 'the upstream to write on while the call is paused');
      await sleep(20);
      expect(handler.chunks).toHaveLength(1);
      expect(handler.events).not.toContain('end');
      handler.call?.resume();
      expect(handler.call?.paused).toBe(false);
      await handler.settled;
      expect(handler.error).toBeNull();
      expect(handler.body).toBe('0,1,2,3,4,5,6,7,8,9,');
    });

    it(`a call paused before its answer gets ${contract.row.http2 ? 'its head but no body' : 'nothing, not even its head,'} until resumed`, async () => {
      contract.upstream.behaviour = (exchange) => ok(exchange, 'late');
      const handler = start(open());
      handler.call?.pause();
      await waitFor(() => contract.upstream.requests.length === 1, 'the request to reach the upstream');
      await sleep(50);
      // undici tells the head of a paused call and holds its body; the in-house pool holds both.
      expect(handler.events).toEqual(per({ http1: ['sent'], http2: ['sent', 'start'] }));
      handler.call?.resume();
      await handler.settled;
      expect(handler.events).toEqual(['sent', 'start', 'data', 'end']);
      expect(handler.body).toBe('late');
    });
  });

  describe('an upstream that fails or misbehaves', () => {
    it('a connection reset in the middle of the body: an error after the data, never an end; the next call gets a new connection', async () => {
      contract.upstream.behaviour = ({ response }) => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.write('partial');
        setTimeout(() => contract.upstream.resetConnections(), 30);
      };
      const transport = open();
      const handler = await send(transport);
      expect(handler.events).toEqual(['sent', 'start', 'data', 'error']);
      expect(handler.body).toBe('partial');
      expect(handler.errorCode).toBe('ECONNRESET');
      contract.upstream.behaviour = (exchange) => ok(exchange);
      await succeeded(transport);
      expect(contract.upstream.connectionCount).toBe(2);
    });

    it('an upstream that answers without reading the upload: the answer is delivered, and the upload is closed and no longer read', async () => {
      contract.upstream.behaviour = ({ response }) => {
        response.writeHead(413, { 'content-type': 'text/plain' });
        response.end('too big!');
      };
      const upload = endlessUpload();
      const handler = await send(open(), { method: 'POST', headers: { 'content-length': String(1024 ** 3) }, body: upload.body });
      expect(handler.statusCode).toBe(413);
      expect(handler.body).toBe('too big!');
      await waitFor(() => upload.body.destroyed, 'the upload to be closed');
      // A generator paused in its own await takes one more step before it sees the close.
      await sleep(20);
      const producedAtEnd = upload.produced();
      await sleep(50);
      expect(upload.produced()).toBe(producedAtEnd);
    });

    it('an upstream that neither reads nor answers: the upload stops at backpressure, and an abort ends the call and closes it', async () => {
      const held = holdRequests();
      const upload = endlessUpload();
      const handler = start(open(), { method: 'POST', headers: { 'content-length': String(1024 ** 3) }, body: upload.body });
      await waitFor(() => held.length === 1, 'the request head to reach the upstream');
      held[0]?.request.pause();
      await sleep(300);
      const producedWhileStalled = upload.produced();
      await sleep(100);
      // Bounded by the socket's (HTTP/1.1) or the stream's flow-control (HTTP/2) buffers: not growing.
      expect(upload.produced() - producedWhileStalled).toBeLessThanOrEqual(64 * 1024);
      expect(producedWhileStalled).toBeLessThan(64 * 1024 * 1024);
      handler.call?.abort(new Error('first byte timeout'));
      await handler.settled;
      expect(handler.error?.message).toBe('first byte timeout');
      await waitFor(() => upload.body.destroyed, 'the upload to be closed');
    });

    it('nothing listening: the call fails with ECONNREFUSED', async () => {
      const server = createNetServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const handler = await send(open({}, {}, new URL(`https://127.0.0.1:${port}`)));
      expect(handler.errorCode).toBe('ECONNREFUSED');
      expect(handler.events).toEqual(['error']);
    });
  });

  describe('close', () => {
    it('close() lets the call in flight finish, then resolves with every connection closed', async () => {
      const held = holdRequests();
      const transport = open();
      const inFlight = start(transport, { path: '/in-flight' });
      await waitFor(() => held.length === 1, 'the request to reach the upstream');
      let closed = false;
      const closing = close(transport).then(() => (closed = true));
      await sleep(30);
      expect(closed).toBe(false);
      ok(held[0] as NonNullable<(typeof held)[0]>, 'finished');
      await closing;
      expect(inFlight.error).toBeNull();
      expect(inFlight.body).toBe('finished');
      await waitFor(() => contract.upstream.openConnections === 0, 'the connection to close');
    });

    it(`a call dispatched after close() fails without reaching the upstream; a second close() ${contract.row.http2 ? 'rejects' : 'resolves'}`, async () => {
      const transport = open();
      await close(transport);
      const handler = await send(transport);
      expect(handler.events).toEqual(['error']);
      expect(handler.errorCode).toBe(per({ http1: 'HTTP1_POOL_CLOSED', http2: 'UND_ERR_DESTROYED' }));
      expect(contract.upstream.connectionCount).toBe(0);
      // undici's Pool is destroyed once closed; the in-house pool stays closed.
      const again = transport.close().then(
        () => 'resolved',
        (error: unknown) => (error as Error).name,
      );
      expect(await again).toBe(per({ http1: 'resolved', http2: 'ClientDestroyedError' }));
    });
  });
}
