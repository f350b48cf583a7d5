import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startOpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';

const hi = [{ role: 'user', content: 'Say hi.' }];

/** A request on a connection of its own (a kept-alive one of undici's global pool could be the one draining). */
async function get(url: string, path: string, headers: Record<string, string> = {}) {
  const answer = await request(`${url}${path}`, { headers: { connection: 'close', ...headers }, reset: true });
  return { status: answer.statusCode, headers: answer.headers, body: await answer.body.text() };
}

describe('GET /ready', () => {
  it('answers 200 while the database and the shared state answer, with no authentication', async () => {
    const harness = await startOpenAIFakeGateway();
    const ready = await get(harness.gateway.url, '/ready');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toEqual({ status: 'ready' });
    await harness.close();
  });

  it('answers 503 while draining, with the listener open until the stream in flight ends: /health 200, new /v1 requests 503 shutting_down with Connection: close', async () => {
    const harness = await startOpenAIFakeGateway({ upstream: { chunkDelayMs: 60, splitBytes: false } });
    const stream = await request(`${harness.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${harness.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: hi, stream: true }),
    });
    expect(stream.statusCode).toBe(200);
    let shutDown = false;
    const shutdown = harness.gateway.shutdown().then(() => {
      shutDown = true;
    });
    const ready = await get(harness.gateway.url, '/ready');
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toEqual({ status: 'draining' });
    expect((await get(harness.gateway.url, '/health')).status).toBe(200);
    const refused = await get(harness.gateway.url, '/v1/models', { authorization: `Bearer ${harness.token}` });
    expect(refused.status).toBe(503);
    expect(refused.headers['connection']).toBe('close');
    expect(JSON.parse(refused.body).error.code).toBe('shutting_down');
    expect(shutDown).toBe(false);
    const streamed = await stream.body.text();
    expect(streamed.trimEnd().endsWith('data: [DONE]')).toBe(true);
    await shutdown;
    // Closed now: a new connection is refused.
    await expect(get(harness.gateway.url, '/health')).rejects.toThrow();
    await Promise.all([harness.upstream.close(), harness.backupUpstream.close()]);
  });
});
