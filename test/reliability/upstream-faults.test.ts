import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HUGE_BYTES } from '../fake-upstreams/fault-upstream.js';
import { LAG_BOUND_MS, MESSAGES, startFaultHarness, whileProbing, type FaultHarness } from './fault-harness.js';

/**
 * What a broken upstream sends must end as an upstream failure of the request that met it
 * (failed over while nothing reached the client), never as a crash, a stall, unbounded memory or
 * a lost request-log row. Vitest fails the run on any uncaught exception in this process, where
 * the gateway runs.
 */
let harness: FaultHarness;
beforeAll(async () => {
  harness = await startFaultHarness();
});
afterAll(async () => {
  await harness?.close();
});

describe('a 2xx answer that is not what the protocol promises', () => {
  const garbage = ['html', 'empty', 'bytes', 'null', 'bad-choices'] as const;
  for (const provider of ['openai', 'anthropic', 'gemini'] as const) {
    it(`${provider}: non-streamed garbage is 502 upstream_invalid_response, logged, and the gateway keeps serving`, async () => {
      for (const fault of garbage) {
        const answer = await harness.post('/v1/chat/completions', { model: `${provider}-${fault}`, messages: MESSAGES });
        expect(answer.status, `${provider}-${fault}`).toBe(502);
        expect(answer.headers['content-type']).toMatch(/^application\/json/);
        expect(answer.json.error?.code, `${provider}-${fault}`).toBe('upstream_invalid_response');
        const row = await harness.logRow(answer.requestId);
        expect(row).toMatchObject({ status: 502, errorCode: 'upstream_invalid_response', model: `${provider}-${fault}` });
      }
      expect(await harness.health()).toBe(200);
    });

    it(`${provider}: a stream request answered 2xx with something other than events is 502 before any byte`, async () => {
      for (const fault of ['html', 'empty', 'bytes', 'json-to-stream'] as const) {
        const answer = await harness.post('/v1/chat/completions', { model: `${provider}-${fault}`, messages: MESSAGES, stream: true });
        expect(answer.status, `${provider}-${fault}`).toBe(502);
        expect(answer.json.error?.code, `${provider}-${fault}`).toBe('upstream_invalid_response');
        expect(answer.text).not.toContain('[DONE]');
        expect(await harness.logRow(answer.requestId)).toMatchObject({ status: 502, errorCode: 'upstream_invalid_response' });
      }
    });
  }

  it('fails over to the next credential, streamed or not, and logs the one that answered', async () => {
    for (const fault of ['html', 'null', 'bad-choices', 'json-to-stream'] as const) {
      // A JSON completion is the right answer to a request that did not ask for a stream.
      for (const stream of fault === 'json-to-stream' ? [true] : [false, true]) {
        const answer = await harness.post('/v1/chat/completions', { model: `failover-${fault}`, messages: MESSAGES, stream });
        expect(answer.status, `${fault} stream=${stream}`).toBe(200);
        if (stream) expect(answer.text).toContain('data: [DONE]');
        else expect(answer.json['object']).toBe('chat.completion');
        expect(await harness.logRow(answer.requestId)).toMatchObject({ status: 200, upstream: 'fault-backup', errorCode: null });
      }
    }
  });

  it('a stream of events that are not chunks is 502 before any byte; a stream that ends with no chunk too', async () => {
    for (const fault of ['bytes', 'empty'] as const) {
      // Labelled as an event stream, but its lines are noise or absent.
      const answer = await harness.post('/v1/chat/completions', { model: `openai-${fault}`, messages: MESSAGES, stream: true });
      expect(answer.status).toBe(502);
    }
  });

  it('usage estimates of a huge prompt run beside other work: the answer comes, /health keeps answering, the row says estimated', async () => {
    const prompt = 'a'.repeat(100_000) + ' ' + 'b'.repeat(100_000);
    const body = { model: 'openai-no-usage', messages: [{ role: 'user', content: prompt }] };
    const probe = await whileProbing(harness, async () => {
      const answer = await harness.post('/v1/chat/completions', body);
      return { answer, row: await harness.logRow(answer.requestId) };
    });
    expect(probe.result.answer.status).toBe(200);
    expect(probe.result.row).toMatchObject({ status: 200, usageSource: 'estimated' });
    // 200,000 letters in runs: at least one token per 128 characters, at most one per character.
    expect(probe.result.row.promptTokens).toBeGreaterThan(200_000 / 128);
    expect(probe.result.row.promptTokens).toBeLessThan(200_000);
    expect(probe.healthFailures).toBe(0);
    expect(probe.maxLagMs).toBeLessThan(LAG_BOUND_MS);
  });
});

describe('bodies past their caps', () => {
  /** Samples heap and buffer memory while `work` runs; returns the highest rise over the start. */
  async function peakMemoryRise<T>(work: () => Promise<T>): Promise<{ result: T; riseBytes: number }> {
    const used = (): number => {
      const { heapUsed, arrayBuffers } = process.memoryUsage();
      return heapUsed + arrayBuffers;
    };
    const start = used();
    let peak = start;
    const timer = setInterval(() => (peak = Math.max(peak, used())), 5);
    try {
      const result = await work();
      peak = Math.max(peak, used());
      return { result, riseBytes: peak - start };
    } finally {
      clearInterval(timer);
    }
  }

  it('one endless SSE line fails the stream at the event cap, in linear time and bounded memory', async () => {
    const { result, riseBytes } = await peakMemoryRise(async () =>
      whileProbing(harness, () => harness.post('/v1/chat/completions', { model: 'openai-huge-event', messages: MESSAGES, stream: true })),
    );
    const answer = result.result;
    // The first event went out; the one after it passed the cap: reported in-band, then the end.
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('"code":"upstream_invalid_response"');
    expect(answer.text).not.toContain('[DONE]');
    expect(await harness.logRow(answer.requestId)).toMatchObject({ status: 200, errorCode: 'upstream_invalid_response' });
    expect(result.maxLagMs).toBeLessThan(LAG_BOUND_MS);
    // The upstream offered 48 MB; the gateway held about the 1 MiB cap (the defect: 373 MB for 50 MB).
    expect(riseBytes).toBeLessThan(HUGE_BYTES / 2);
  });

  it('a non-streamed answer past max_response_bytes is 502 upstream_invalid_response, and fails over', async () => {
    const answer = await harness.post('/v1/chat/completions', { model: 'openai-huge-answer', messages: MESSAGES });
    expect(answer.status).toBe(502);
    expect(answer.json.error?.code).toBe('upstream_invalid_response');
    // The cap is named in the request's log line; the caller gets the code and the request id.
    expect(answer.json.error?.message).toContain(`request id ${answer.requestId}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const failure = harness.logLines.find((line) => line['requestId'] === answer.requestId && line['msg'] === 'upstream attempt failed');
    expect(String(failure?.['cause'])).toContain('larger than 1048576 bytes');
    const failover = await harness.post('/v1/chat/completions', { model: 'failover-huge-answer', messages: MESSAGES });
    expect(failover.status).toBe(200);
  });

  it('an error body of 48 MB is read only as far as its first 64 KiB: the mapped error comes at once, memory stays flat', async () => {
    for (const stream of [false, true]) {
      const { result: answer, riseBytes } = await peakMemoryRise(() =>
        harness.post('/v1/chat/completions', { model: 'openai-huge-error', messages: MESSAGES, stream }),
      );
      expect(answer.status).toBe(502);
      expect(answer.json.error?.code).toBe('upstream_error');
      expect(answer.json.error?.message.length).toBeLessThanOrEqual(1025);
      expect(riseBytes).toBeLessThan(HUGE_BYTES / 2);
      expect(await harness.logRow(answer.requestId)).toMatchObject({ status: 502, errorCode: 'upstream_error' });
    }
  });
});

describe('an upstream that resets the connection after reading the request', () => {
  it('is 502 upstream_error; the request was sent once, not replayed on another connection', async () => {
    const before = harness.upstream.received.get('reset-after-read') ?? 0;
    // The first call opens the connection; later ones reuse kept-alive connections of the pool.
    for (let attempt = 0; attempt < 3; attempt++) {
      const warm = await harness.post('/v1/chat/completions', { model: 'openai-ok', messages: MESSAGES });
      expect(warm.status).toBe(200);
      const answer = await harness.post('/v1/chat/completions', { model: 'openai-reset-after-read', messages: MESSAGES });
      expect(answer.status).toBe(502);
      expect(answer.json.error?.code).toBe('upstream_error');
      expect(await harness.logRow(answer.requestId)).toMatchObject({ status: 502, errorCode: 'upstream_error' });
    }
    expect(harness.upstream.received.get('reset-after-read')).toBe(before + 3);
  });

  it('fails over to the next credential, which answers', async () => {
    const answer = await harness.post('/v1/chat/completions', { model: 'failover-reset-after-read', messages: MESSAGES, stream: true });
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('data: [DONE]');
  });
});

describe("an upstream's rate-limit headers", () => {
  it('are not passed to callers as if they were their own, streamed or not', async () => {
    for (const stream of [false, true]) {
      const answer = await harness.post('/v1/chat/completions', { model: 'openai-ok', messages: MESSAGES, stream });
      expect(answer.status).toBe(200);
      expect(Object.keys(answer.headers).filter((name) => name.startsWith('x-ratelimit-'))).toEqual([]);
    }
  });
});

describe('what callers are told of upstream failures', () => {
  it("never names a credential, a URL or the HTTP client's own codes, and always the request id", async () => {
    const faults = ['html', 'empty', 'bytes', 'null', 'bad-choices', 'json-to-stream', 'huge-answer', 'huge-error', 'reset-after-read'] as const;
    const answers = [];
    for (const provider of ['openai', 'anthropic', 'gemini'] as const) {
      for (const fault of faults) {
        for (const stream of [false, true])
          answers.push(await harness.post('/v1/chat/completions', { model: `${provider}-${fault}`, messages: MESSAGES, stream }));
      }
    }
    const failed = answers.filter((answer) => answer.status >= 400 || answer.text.includes('"error"'));
    expect(failed.length).toBeGreaterThan(30);
    for (const answer of failed) {
      const text = answer.text;
      for (const internal of ['fault-anthropic', 'fault-gemini', "'fault'", 'Upstream fault', '127.0.0.1', 'http://', 'HTTP1_', 'ECONN', 'EPIPE', 'sk-']) {
        expect(text, `${answer.requestId}: ${text}`).not.toContain(internal);
      }
      expect(text).toContain(`request id ${answer.requestId}`);
    }
  });
});
