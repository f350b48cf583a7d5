import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFaultHarness, type FaultHarness } from '../reliability/fault-harness.js';

const MESSAGES = [{ role: 'user', content: 'Hello' }];

/** The log lines of a request once there are `count` of them (the access line is written when the response ends). */
function linesOf(harness: FaultHarness, requestId: string, count: number): Promise<Array<Record<string, unknown>>> {
  return vi.waitFor(
    () => {
      const lines = harness.logLines.filter((line) => line['requestId'] === requestId);
      expect(lines.length).toBeGreaterThanOrEqual(count);
      return lines;
    },
    { timeout: 1_000, interval: 10 },
  );
}

describe('the access log', () => {
  let harness: FaultHarness;
  beforeAll(async () => {
    harness = await startFaultHarness();
  });
  afterAll(async () => {
    await harness.close();
  });

  it('writes one info line per /v1 request when it ends, with what an operator needs and no secret', async () => {
    const answer = await harness.post('/v1/chat/completions', { model: 'openai-ok', messages: MESSAGES }, { headers: { 'x-session-id': 'session-7' } });
    expect(answer.status).toBe(200);
    const [line, ...more] = await linesOf(harness, answer.requestId, 1);
    expect(more).toEqual([]);
    expect(line).toMatchObject({
      level: 30,
      msg: 'request',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      errorCode: null,
      model: 'openai-ok',
      team: 'faults',
      sessionId: 'session-7',
      credential: 'fault',
      promptTokens: 8,
      completionTokens: 9,
      usageSource: 'upstream',
    });
    expect(line?.['tokenId']).toMatch(/^tok_/);
    expect(typeof line?.['latencyMs']).toBe('number');
    expect(typeof line?.['firstByteMs']).toBe('number');
    const everything = JSON.stringify(harness.logLines);
    expect(everything).not.toContain(harness.token);
    expect(everything).not.toContain('sk-fault');
  });

  it('writes each failed upstream attempt at warn with the credential and the cause, then the request', async () => {
    const answer = await harness.post('/v1/chat/completions', { model: 'failover-html', messages: MESSAGES });
    expect(answer.status).toBe(200);
    const lines = await linesOf(harness, answer.requestId, 2);
    expect(lines.map((line) => [line['level'], line['msg']])).toEqual([
      [40, 'upstream attempt failed'],
      [30, 'request'],
    ]);
    expect(lines[0]).toMatchObject({ credential: 'fault', code: 'upstream_invalid_response', class: 'protocol', status: null });
    expect(String(lines[0]?.['cause'])).toContain('not a chat completion');
    expect(lines[1]).toMatchObject({ status: 200, credential: 'fault-backup' });
  });

  it('classes each failed attempt the way the router will act on it: an answered 500 is server, a reset is connect', async () => {
    for (const [model, expected] of [
      ['failover-huge-error', { class: 'server', status: 500, code: 'upstream_error' }],
      ['failover-reset-after-read', { class: 'connect', status: null, code: 'upstream_error' }],
    ] as const) {
      const answer = await harness.post('/v1/chat/completions', { model, messages: MESSAGES });
      expect(answer.status).toBe(200);
      const [failure] = await linesOf(harness, answer.requestId, 2);
      expect(failure).toMatchObject({ msg: 'upstream attempt failed', credential: 'fault', ...expected });
    }
  });

  it('logs refusals before authentication too, without a token', async () => {
    const answer = await harness.post('/v1/chat/completions', { model: 'openai-ok', messages: MESSAGES }, { token: 'svc_wrong' });
    expect(answer.status).toBe(401);
    const [line] = await linesOf(harness, answer.requestId, 1);
    expect(line).toMatchObject({ msg: 'request', status: 401, errorCode: 'invalid_api_key', tokenId: null });
  });
});

describe('logging.access: false', () => {
  it('turns the access lines off, and keeps the upstream failures', async () => {
    const harness = await startFaultHarness({}, { logging: { level: 'info', access: false } });
    try {
      const answer = await harness.post('/v1/chat/completions', { model: 'failover-html', messages: MESSAGES });
      expect(answer.status).toBe(200);
      const lines = await linesOf(harness, answer.requestId, 1);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(harness.logLines.filter((line) => line['requestId'] === answer.requestId).map((line) => line['msg'])).toEqual(['upstream attempt failed']);
      expect(lines).toHaveLength(1);
    } finally {
      await harness.close();
    }
  });
});
