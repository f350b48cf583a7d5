import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LimitHolder } from '../../src/access/index.js';
import type { Limits } from '../../src/store/index.js';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';
import { resetCredentials } from '../support/reset-credentials.js';

let harness: OpenAIFakeGateway;

beforeAll(async () => {
  harness = await startOpenAIFakeGateway({
    config: {
      models: [
        {
          id: 'gpt-4o-mini',
          type: 'chat',
          routes: [{ upstream: 'primary', model: 'gpt-4o-mini-2024-07-18' }],
          price: { input_per_mtok: 150, output_per_mtok: 600 },
        },
      ],
    },
  });
});
afterAll(async () => {
  await harness.close();
});
beforeEach(() => {
  resetCredentials(harness.gateway);
  harness.upstream.options = {};
});

let teamNumber = 0;

/** A token of a team of its own, with these limits on the token (and on its team). */
async function limitedToken(limits: Limits, teamLimits: Limits = {}): Promise<{ id: string; team: string; client: OpenAI; secret: string }> {
  const team = `limits-${++teamNumber}`;
  const { secret, record } = await harness.gateway.tokens.create({ team, limits });
  if (Object.keys(teamLimits).length > 0) await harness.gateway.teams.updateTeam(team, { limits: teamLimits });
  return { id: record.id, team, client: harness.clientFor(secret), secret };
}

async function refusal(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.RateLimitError>> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpenAI.RateLimitError);
  return error as InstanceType<typeof OpenAI.RateLimitError>;
}

const ask = (client: OpenAI) => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] }).withResponse();

/** The request log's total of prompt + completion tokens and dollars for a token, once its `count` rows are written (and their charges settled). */
async function loggedSpending(tokenId: string, count: number): Promise<{ tokens: number; usd: number; rows: number }> {
  // Rows are written in batches after their requests end, later still on a loaded machine.
  const rows = await vi.waitFor(
    async () => {
      const written = await harness.gateway.stores.requestLogs.query({ limit: 1000, tokenId });
      expect(written.length, `request log rows of ${tokenId}`).toBeGreaterThanOrEqual(count);
      return written;
    },
    { timeout: 15_000, interval: 25 },
  );
  // A row is written once its request ended, so its charge is settled or being settled.
  await harness.gateway.limits.drain();
  return {
    tokens: rows.reduce((sum, row) => sum + (row.promptTokens ?? 0) + (row.completionTokens ?? 0), 0),
    usd: rows.reduce((sum, row) => sum + (row.costUsd ?? 0), 0),
    rows: rows.length,
  };
}

function tokenHolder(id: string, limits: Limits): LimitHolder {
  return { kind: 'token', key: `token:${id}`, label: id, match: { tokenId: id }, limits };
}

describe('caller limits through the gateway', () => {
  it('rpm: N requests pass with the x-ratelimit headers, N+1 is 429 rate_limit_exceeded naming the token, with Retry-After', async () => {
    const { id, client } = await limitedToken({ rpm: 3 });
    for (const remaining of ['2', '1', '0']) {
      const { response } = await ask(client);
      expect(response.headers.get('x-ratelimit-limit-requests')).toBe('3');
      expect(response.headers.get('x-ratelimit-remaining-requests')).toBe(remaining);
      expect(response.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+(\.\d+)?s|\d+ms)$/);
    }
    const error = await refusal(ask(client));
    expect(error.code).toBe('rate_limit_exceeded');
    expect(error.message).toContain(`3 requests per minute for token ${id}`);
    const retryAfter = Number(error.headers?.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(error.headers?.get('x-ratelimit-remaining-requests')).toBe('0');
  });

  it('the strictest limit applies: a team limit under the token limit refuses first, naming the team', async () => {
    const { team, client } = await limitedToken({ rpm: 10 }, { rpm: 1 });
    await ask(client);
    const error = await refusal(ask(client));
    expect(error.message).toContain(`1 requests per minute for team "${team}"`);
  });

  it('max_concurrent: the request over the limit in flight is refused, and the slot frees when one ends', async () => {
    const { client } = await limitedToken({ maxConcurrent: 1 });
    harness.upstream.options = { firstByteDelayMs: 400 };
    const first = ask(client);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const error = await refusal(ask(client));
    expect(error.code).toBe('rate_limit_exceeded');
    expect(error.message).toContain('1 requests in flight');
    await first;
    await harness.gateway.limits.drain();
    harness.upstream.options = {};
    await ask(client);
  });

  it('tokens per day: plain, streamed and aborted requests are charged what the log says; then 429 quota_exceeded with the reset time', async () => {
    const limits = { tokensPerDay: 100_000, usdPerDay: 10 };
    const { id, client } = await limitedToken(limits);
    await ask(client);
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Stream' }], stream: true });
    for await (const chunk of stream) void chunk;
    // A stream the client leaves after its first chunk: charged what was generated (estimated, the upstream never said).
    harness.upstream.options = { chunkDelayMs: 100 };
    const aborted = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Stream slowly' }], stream: true });
    for await (const chunk of aborted) {
      void chunk;
      break;
    }
    // A request the gateway refuses (422) is not charged.
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], temperature: 5 }).catch(() => undefined);
    // Four rows: the aborted stream's is written once the gateway has seen the client leave.
    const logged = await loggedSpending(id, 4);
    expect(logged.rows).toBe(4);
    const counted = (await harness.gateway.limits.read([tokenHolder(id, limits)]))[`token:${id}`];
    expect(counted?.tokensPerDay).toBe(logged.tokens);
    expect(counted?.usdPerDay).toBeCloseTo(logged.usd, 12);
    expect(logged.usd).toBeGreaterThan(0);

    // The quota set just under what is spent: the next request is refused.
    const tight = await limitedToken({ tokensPerDay: 17 });
    await ask(tight.client);
    const error = await refusal(ask(tight.client));
    expect(error.code).toBe('quota_exceeded');
    const midnight = new Date(Math.ceil((Date.now() + 1) / 86_400_000) * 86_400_000).toISOString();
    expect(error.message).toBe(`429 Quota exceeded: 17 tokens per day (UTC) for token ${tight.id}. It resets at ${midnight}.`);
    expect(Number(error.headers?.get('retry-after'))).toBeGreaterThan(0);
  });

  it('the openai SDK tells the three 429s apart by code', async () => {
    const rated = await limitedToken({ rpm: 1 });
    await ask(rated.client);
    expect((await refusal(ask(rated.client))).code).toBe('rate_limit_exceeded');
    const spent = await limitedToken({ tokensTotal: 1 });
    await ask(spent.client);
    const quota = await refusal(ask(spent.client));
    expect(quota.code).toBe('quota_exceeded');
    expect(quota.message).toContain('never resets');
    // The SDK is told not to retry it (it would within a minute by itself).
    expect(quota.headers?.get('x-should-retry')).toBe('false');
    const free = await limitedToken({});
    harness.upstream.failNext({ status: 429, headers: { 'retry-after': '7' } });
    expect((await refusal(ask(free.client))).code).toBe('upstream_rate_limited');
  });
});
