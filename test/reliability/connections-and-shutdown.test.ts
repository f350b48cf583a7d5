import { rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { openStores } from '../../src/store/index.js';
import { SHUTDOWN_TIMEOUT_MS, startFaultHarness } from './fault-harness.js';
import { openSocket } from './raw-client.js';

const MESSAGES = [{ role: 'user', content: 'Hello' }];

describe('server.max_connections', () => {
  it('closes connections past the cap as they arrive, and takes new ones again once some close', async () => {
    const harness = await startFaultHarness({ max_connections: 3 });
    const held: Socket[] = [];
    try {
      for (let index = 0; index < 3; index++) held.push(await openSocket(harness.gateway.url));
      // Give the server a turn to count them.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await expect(harness.health()).rejects.toThrow();
      held.pop()?.destroy();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await harness.health()).toBe(200);
    } finally {
      for (const socket of held) socket.destroy();
      await harness.close();
    }
  });
});

describe('the shutdown deadline', () => {
  it('answers a request still waiting for its upstream with 503 shutting_down instead of an empty reply, and logs it', async () => {
    const harness = await startFaultHarness();
    const pending = request(`${harness.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${harness.token}`, 'content-type': 'application/json', 'x-request-id': 'waits-at-shutdown' },
      body: JSON.stringify({ model: 'openai-hang', messages: MESSAGES }),
    });
    // The request has reached the upstream, which never answers.
    for (let attempt = 0; attempt < 100 && harness.upstream.received.get('hang') === undefined; attempt++) await new Promise((resolve) => setTimeout(resolve, 10));
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
