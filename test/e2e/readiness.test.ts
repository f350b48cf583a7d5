import { Agent, request } from 'undici';
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

  it('drains: for server.drain_delay_ms /ready says 503 and requests are served with Connection: close; then new requests are answered 503 shutting_down until the stream in flight ends whole', async () => {
    const harness = await startOpenAIFakeGateway({
      upstream: { chunkDelayMs: 60, splitBytes: false },
      config: { server: { host: '127.0.0.1', port: 0, shutdown_timeout_ms: 5_000, drain_delay_ms: 600 } },
    });
    const url = harness.gateway.url;
    const models = { authorization: `Bearer ${harness.token}` };
    // A connection kept alive from before the signal, as a load balancer keeps its own.
    const kept = new Agent({ connections: 1 });
    const onKept = () => request(`${url}/v1/models`, { headers: models, dispatcher: kept });
    const before = await onKept();
    await before.body.text();
    expect(before.headers['connection']).toBe('keep-alive');
    const stream = await request(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...models, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: hi, stream: true }),
    });
    expect(stream.statusCode).toBe(200);
    let shutDown = false;
    const signalledAt = performance.now();
    const shutdown = harness.gateway.shutdown().then(() => {
      shutDown = true;
    });
    // The drain delay: not ready, but served, and told to let go of the connection.
    const ready = await get(url, '/ready');
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toEqual({ status: 'draining' });
    expect((await get(url, '/health')).status).toBe(200);
    const served = await get(url, '/v1/models', models);
    expect(served.status).toBe(200);
    expect(served.headers['connection']).toBe('close');
    const keptServed = await onKept();
    expect(keptServed.statusCode).toBe(200);
    expect(keptServed.headers['connection']).toBe('close');
    await keptServed.body.text();
    expect(performance.now() - signalledAt).toBeLessThan(600);
    // After it: refused while the stream still runs, the listener open.
    await new Promise((resolve) => setTimeout(resolve, 700 - (performance.now() - signalledAt)));
    const refused = await get(url, '/v1/models', models);
    expect(refused.status).toBe(503);
    expect(refused.headers['connection']).toBe('close');
    expect(JSON.parse(refused.body).error.code).toBe('shutting_down');
    expect(shutDown).toBe(false);
    const streamed = await stream.body.text();
    expect(streamed.trimEnd().endsWith('data: [DONE]')).toBe(true);
    await shutdown;
    await kept.close();
    await Promise.all([harness.upstream.close(), harness.backupUpstream.close()]);
  });
});
