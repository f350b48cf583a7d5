import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultHarness, type FaultHarness } from '../reliability/fault-harness.js';

const ALLOWED = 'https://app.example';

let harness: FaultHarness;
beforeAll(async () => {
  harness = await startFaultHarness({ cors: { allowed_origins: [ALLOWED] } });
});
afterAll(async () => {
  await harness.close();
});

function preflight(origin: string) {
  return request(`${harness.gateway.url}/v1/chat/completions`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
  });
}

describe('CORS (server.cors.allowed_origins)', () => {
  it('answers a preflight from an allowed origin 204 with the allow headers', async () => {
    const response = await preflight(ALLOWED);
    expect(response.statusCode).toBe(204);
    expect(response.headers).toMatchObject({
      'access-control-allow-origin': ALLOWED,
      'access-control-allow-methods': 'GET, POST, OPTIONS',
      'access-control-allow-headers': 'authorization, content-type, x-session-id, x-request-id',
      vary: 'origin',
    });
  });

  it('gives a preflight from any other origin no allow headers', async () => {
    const response = await preflight('https://evil.example');
    expect(response.statusCode).toBe(204);
    expect(Object.keys(response.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
  });

  it('marks responses to an allowed origin, errors included, and exposes the ids, session, limits and retry headers', async () => {
    for (const token of [harness.token, 'svc_wrong']) {
      const answer = await harness.post(
        '/v1/chat/completions',
        { model: 'openai-ok', messages: [{ role: 'user', content: 'Hi' }] },
        { token, headers: { origin: ALLOWED } },
      );
      expect(answer.headers['access-control-allow-origin']).toBe(ALLOWED);
      expect(String(answer.headers['access-control-expose-headers'])).toBe(
        'x-request-id, x-session-id, x-session-source, x-session-affinity, x-ratelimit-limit-requests, x-ratelimit-remaining-requests, x-ratelimit-reset-requests, x-ratelimit-limit-tokens, x-ratelimit-remaining-tokens, x-ratelimit-reset-tokens, retry-after',
      );
    }
    const models = await request(`${harness.gateway.url}/v1/models`, { headers: { origin: ALLOWED, authorization: `Bearer ${harness.token}` } });
    await models.body.text();
    expect(models.headers['access-control-allow-origin']).toBe(ALLOWED);
  });

  it('adds nothing for another origin, or for a request without one', async () => {
    for (const headers of [{ origin: 'https://evil.example' }, {}] as Array<Record<string, string>>) {
      const answer = await harness.post('/v1/chat/completions', { model: 'openai-ok', messages: [{ role: 'user', content: 'Hi' }] }, { headers });
      expect(answer.status).toBe(200);
      expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    }
  });
});
