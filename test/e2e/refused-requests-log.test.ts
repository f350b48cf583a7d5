import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';

type Row = Record<string, unknown> & { id: string; model: string | null; status: number; ttfb_ms: number | null; attempts: unknown[] | null };

/** What the request log keeps of requests the gateway refused itself, before any upstream was called. */
describe('refused requests in the request log', () => {
  let harness: OpenAIFakeGateway;
  let adminToken: string;
  const ids: Record<string, string> = {};

  async function send(token: string, body: Record<string, unknown>): Promise<{ status: number; id: string }> {
    const response = await fetch(`${harness.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }], ...body }),
    });
    await response.arrayBuffer();
    return { status: response.status, id: (await harness.logRow(response.headers.get('x-request-id'))).id };
  }

  async function admin<T>(path: string): Promise<T> {
    const response = await fetch(`${harness.gateway.url}/admin/v1${path}`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(response.status).toBe(200);
    return (await response.json()) as T;
  }

  beforeAll(async () => {
    harness = await startOpenAIFakeGateway();
    adminToken = await harness.createToken({ team: 'ops', scopes: ['admin'] });
    const token = await harness.createToken({ team: 'refused', models: ['gpt-4o-mini'] });
    const cases: Array<[string, Record<string, unknown>, number]> = [
      ['served', { model: 'gpt-4o-mini' }, 200],
      ['unknown', { model: 'no-such-model' }, 404],
      ['not allowed', { model: 'pooled-chat' }, 403],
      ['invalid', { model: 'gpt-4o-mini', temperature: 5 }, 422],
    ];
    for (const [name, body, status] of cases) {
      const sent = await send(token, body);
      expect(sent.status, name).toBe(status);
      ids[name] = sent.id;
    }
  });
  afterAll(async () => {
    await harness.close();
  });

  it('keeps the model the request named, whether or not it exists, so that a model filter finds the refusals', async () => {
    const byModel = async (model: string) => (await admin<{ data: Row[] }>(`/requests?model=${model}`)).data.map((row) => row.id).sort();
    expect(await byModel('no-such-model')).toEqual([ids['unknown']]);
    expect(await byModel('pooled-chat')).toEqual([ids['not allowed']]);
    expect(await byModel('gpt-4o-mini')).toEqual([ids['served'], ids['invalid']].sort());
  });

  it("keeps the model of a request refused by the caller's own limits (429), answered once its body is read", async () => {
    const { secret, record } = await harness.gateway.tokens.create({ team: 'limited', limits: { rpm: 1 } });
    expect((await send(secret, { model: 'gpt-4o-mini' })).status).toBe(200);
    const limited = await send(secret, { model: 'gpt-4o-mini' });
    expect(limited.status).toBe(429);
    const misnamed = await send(secret, { model: 'gpt-4o-mini-but-limited' });
    expect(misnamed.status).toBe(429);
    const rows = async (model: string) => (await admin<{ data: Row[] }>(`/requests?model=${model}&token_id=${record.id}`)).data;
    expect((await rows('gpt-4o-mini')).map((row) => row.status).sort()).toEqual([200, 429]);
    expect((await rows('gpt-4o-mini-but-limited')).map((row) => row.id)).toEqual([misnamed.id]);
    // A body that is not JSON is still refused 429, not 400: the limit is what the caller hit first.
    const response = await fetch(`${harness.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: '{"model": ',
    });
    expect(response.status).toBe(429);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
  });

  it('gives a request no upstream was called for no first-byte time, and a served one its time', async () => {
    for (const name of ['unknown', 'not allowed', 'invalid']) {
      const row = await admin<Row>(`/requests/${ids[name] as string}`);
      expect(row.attempts ?? [], name).toEqual([]);
      expect(row.ttfb_ms, name).toBeNull();
    }
    const served = await admin<Row>(`/requests/${ids['served'] as string}`);
    expect(served.attempts).toHaveLength(1);
    expect(served.ttfb_ms).toBeGreaterThan(0);
  });
});
