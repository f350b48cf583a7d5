import { rmSync } from 'node:fs';
import { get } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { request } from 'undici';
import { openStores } from '../../src/store/index.js';
import { MESSAGES, SHUTDOWN_TIMEOUT_MS, startFaultHarness, type FaultHarness } from './fault-harness.js';
import { openSocket, parseAnswer, postHead } from './raw-client.js';

describe('server.max_connections', () => {
  it('refuses a new connection when every open one is serving a request, and takes new ones again once one closes', async () => {
    const harness = await startFaultHarness({ max_connections: 3 });
    const held: Socket[] = [];
    try {
      const body = JSON.stringify({ model: 'openai-hang', messages: MESSAGES });
      for (let index = 0; index < 3; index++) {
        const socket = await openSocket(harness.gateway.url);
        socket.on('error', () => undefined);
        socket.write(postHead('/v1/chat/completions', harness.token, Buffer.byteLength(body)) + body);
        held.push(socket);
      }
      // Each request has reached the upstream, which never answers: all three are serving.
      expect(await until(() => harness.upstream.received.get('hang') === 3)).toBe(true);
      await expect(healthOnNewConnection(harness.gateway.url)).rejects.toThrow();
      held.pop()?.destroy();
      expect(await until(async () => (await openConnections(harness)) === 2)).toBe(true);
      expect(await healthOnNewConnection(harness.gateway.url)).toBe(200);
    } finally {
      for (const socket of held) socket.destroy();
      await harness.close();
    }
  });

  it('at the cap, closes the oldest connection that has sent no whole request head to make room, before any kept-alive one', async () => {
    const harness = await startFaultHarness({ max_connections: 4 });
    const sockets: TrackedSocket[] = [];
    try {
      sockets.push(await keptAlive(harness.gateway.url), await keptAlive(harness.gateway.url));
      const silent = track(await openSocket(harness.gateway.url));
      const slow = track(await openSocket(harness.gateway.url));
      slow.socket.write('GET /health HTTP/1.1\r\nhost: gate');
      sockets.push(silent, slow);
      expect(await until(async () => (await openConnections(harness)) === 4)).toBe(true);

      expect(await healthOnNewConnection(harness.gateway.url)).toBe(200);
      expect(await until(() => silent.closed)).toBe(true);
      // At the cap again, with a newer silent connection: the oldest of those without a request goes.
      expect(await until(async () => (await openConnections(harness)) === 3)).toBe(true);
      const newer = track(await openSocket(harness.gateway.url));
      sockets.push(newer);
      expect(await until(async () => (await openConnections(harness)) === 4)).toBe(true);
      expect(await healthOnNewConnection(harness.gateway.url)).toBe(200);
      expect(await until(() => slow.closed)).toBe(true);
      expect(newer.closed).toBe(false);
      // The kept-alive ones are still open, and answer.
      for (const kept of sockets.slice(0, 2)) expect(await askHealth(kept)).toBe(true);
    } finally {
      for (const { socket } of sockets) socket.destroy();
      await harness.close();
    }
  });

  it('at the cap, closes a kept-alive connection with no request in flight to make room', async () => {
    const harness = await startFaultHarness({ max_connections: 3 });
    const sockets: TrackedSocket[] = [];
    try {
      for (let index = 0; index < 3; index++) sockets.push(await keptAlive(harness.gateway.url));
      expect(await healthOnNewConnection(harness.gateway.url)).toBe(200);
      const [oldest, ...others] = sockets as [TrackedSocket, ...TrackedSocket[]];
      expect(await until(() => oldest.closed)).toBe(true);
      for (const kept of others) expect(await askHealth(kept)).toBe(true);
    } finally {
      for (const { socket } of sockets) socket.destroy();
      await harness.close();
    }
  });

  it('closes a kept-alive connection left idle past the keep-alive timeout', async () => {
    const harness = await startFaultHarness();
    try {
      // 72 s in service; Node adds its own second (keepAliveTimeoutBuffer).
      harness.gateway.app.server.keepAliveTimeout = 100;
      const kept = await keptAlive(harness.gateway.url);
      expect(await until(() => kept.closed, 5_000)).toBe(true);
      expect(await openConnections(harness)).toBe(0);
    } finally {
      await harness.close();
    }
  });
});

describe('server.max_connections_per_client', () => {
  it("closes a connection past one address's share as it arrives, serves other addresses meanwhile, and takes the address's connections again once one closes", async () => {
    const harness = await startFaultHarness({ max_connections_per_client: 2 });
    const sockets: TrackedSocket[] = [];
    try {
      const from = { localAddress: '127.0.0.2' };
      for (let index = 0; index < 3; index++) sockets.push(track(await openSocket(harness.gateway.url, from)));
      const [first, second, third] = sockets as [TrackedSocket, TrackedSocket, TrackedSocket];
      expect(await until(() => third.closed)).toBe(true);
      expect(await healthOnNewConnection(harness.gateway.url)).toBe(200);
      expect(await askHealth(second)).toBe(true);
      first.socket.destroy();
      expect(await until(async () => (await openConnections(harness)) === 1)).toBe(true);
      const fourth = track(await openSocket(harness.gateway.url, from));
      sockets.push(fourth);
      expect(await askHealth(fourth)).toBe(true);
    } finally {
      for (const { socket } of sockets) socket.destroy();
      await harness.close();
    }
  });
});

describe('server.header_timeout_ms', () => {
  it('answers 408 to a connection whose head has not arrived in time and closes it fully, though its client neither reads nor closes', async () => {
    const harness = await startFaultHarness({ header_timeout_ms: 300 });
    const sockets: Socket[] = [];
    try {
      // Sends nothing, reads nothing, never closes its side.
      const silent = await openSocket(harness.gateway.url, { allowHalfOpen: true });
      silent.pause();
      // Sends a head that never ends.
      const slow = await openSocket(harness.gateway.url, { allowHalfOpen: true });
      slow.write('GET /health HTTP/1.1\r\nhost: gateway\r\nx-slow: ');
      slow.pause();
      sockets.push(silent, slow);
      expect(await openConnections(harness)).toBe(2);
      // Closed on the gateway's side: the connections are gone, not half-closed and waiting for the clients.
      expect(await until(async () => (await openConnections(harness)) === 0, 5_000)).toBe(true);
      for (const socket of sockets) {
        const answer = await readToEnd(socket);
        expect(answer.status).toBe(408);
        expect(answer.headers['connection']).toBe('close');
        expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'request_timeout' } });
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      await harness.close();
    }
  });
});

interface TrackedSocket {
  socket: Socket;
  /** Whether the gateway closed it (its FIN, or a reset). */
  closed: boolean;
}

function track(socket: Socket): TrackedSocket {
  const tracked = { socket, closed: false };
  const closed = () => (tracked.closed = true);
  socket.on('end', closed).on('close', closed).on('error', closed);
  return tracked;
}

/** Asks `/health` on the connection; whether it was answered 200. */
function askHealth(tracked: TrackedSocket): Promise<boolean> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (!text.includes('{"status":"ok"}')) return;
      tracked.socket.off('data', onData);
      resolve(text.startsWith('HTTP/1.1 200 '));
    };
    tracked.socket.on('data', onData);
    tracked.socket.once('close', () => resolve(false));
    tracked.socket.write('GET /health HTTP/1.1\r\nhost: gateway\r\n\r\n');
  });
}

/** A connection that has been answered one request and is kept alive, idle. */
async function keptAlive(url: string): Promise<TrackedSocket> {
  const tracked = track(await openSocket(url));
  if (!(await askHealth(tracked))) throw new Error('/health was not answered');
  return tracked;
}

/** Reads what the gateway sent until it closed its side. */
function readToEnd(socket: Socket): Promise<ReturnType<typeof parseAnswer>> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('end', () => resolve(parseAnswer(Buffer.concat(chunks).toString('utf8'))));
    socket.resume();
  });
}

/** `/health` on a connection of its own (undici's pool would reuse a kept-alive one); rejects when the connection is refused. */
function healthOnNewConnection(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = get(`${url}/health`, { agent: false }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? 0));
    });
    outgoing.once('error', reject);
  });
}

function openConnections(harness: FaultHarness): Promise<number> {
  return new Promise((resolve, reject) => harness.gateway.app.server.getConnections((error, count) => (error === null ? resolve(count) : reject(error))));
}

/** Waits until `condition` holds, or `timeoutMs` passes: whether it held. */
async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 2_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

describe('the shutdown deadline', () => {
  it('answers a request still waiting for its upstream with 503 shutting_down instead of an empty reply, and logs it', async () => {
    const harness = await startFaultHarness();
    const pending = request(`${harness.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${harness.token}`, 'content-type': 'application/json', 'x-request-id': 'waits-at-shutdown' },
      body: JSON.stringify({ model: 'openai-hang', messages: MESSAGES }),
    });
    // The request has reached the upstream, which never answers.
    await vi.waitFor(() => expect(harness.upstream.received.get('hang')).toBeDefined(), { timeout: 5_000, interval: 10 });
    const started = Date.now();
    const shutdown = harness.gateway.shutdown();
    const response = await pending;
    const body = (await response.body.json()) as { error: { code: string; type: string } };
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
    expect(body.error).toMatchObject({ code: 'shutting_down', type: 'service_unavailable' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(SHUTDOWN_TIMEOUT_MS - 50);
    await shutdown;
    // The row was written before the database closed.
    const stores = await openStores(`sqlite:${harness.databasePath}`);
    const [row] = await stores.requestLogs.query({ requestId: 'waits-at-shutdown', limit: 1 });
    await stores.close();
    expect(row).toMatchObject({ status: 503, errorCode: 'shutting_down' });
    await harness.upstream.close();
    rmSync(harness.directory, { recursive: true, force: true });
  });
});
