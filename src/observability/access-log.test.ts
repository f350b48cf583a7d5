import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../store/index.js';
import { RequestRecord } from '../usage/index.js';
import { accessLine, accessLog } from './access-log.js';
import { createLogger } from './logger.js';

function capture(level = 'info', fields: Record<string, number> = {}): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(
        ...chunk
          .toString()
          .split('\n')
          .filter((line) => line !== ''),
      );
      done();
    },
  });
  return { logger: createLogger(level, stream, fields), lines };
}

function entryOf(record: RequestRecord, overrides: Partial<RequestLogEntry> = {}): RequestLogEntry {
  return {
    id: record.id,
    clientRequestId: record.clientRequestId,
    createdAt: record.createdAt,
    tokenId: 'tok_abc',
    team: 'team "quoted" \\ ü',
    project: null,
    endpoint: 'chat.completions',
    model: 'gpt-4o\n\u2028mini',
    upstream: 'openai-a',
    upstreamModel: 'gpt-4o-mini',
    sessionId: 'inf_1',
    status: 200,
    latencyMs: 12.345,
    ttfbMs: null,
    promptTokens: 12,
    completionTokens: null,
    cachedTokens: null,
    cacheWriteTokens: null,
    reasoningTokens: null,
    costUsd: null,
    usageSource: 'upstream',
    errorCode: null,
    sessionSource: 'inferred',
    affinity: 'new',
    attempts: null,
    clientAddress: '127.0.0.1',
    worker: null,
    ...overrides,
  };
}

describe('the access line', () => {
  it('is the line pino writes for the same fields: keys, order, values and escapes', async () => {
    const { logger, lines } = capture();
    for (const clientRequestId of [null, 'caller-id-1']) {
      const record = new RequestRecord('req_1', 'chat.completions', clientRequestId);
      record.method = 'POST';
      record.path = '/v1/chat/completions?x=1';
      record.clientAddress = '::1';
      const entry = entryOf(record);
      const time = Date.now();
      logger.info(
        {
          requestId: entry.id,
          ...(clientRequestId === null ? {} : { clientRequestId }),
          client: '::1',
          method: 'POST',
          path: '/v1/chat/completions',
          status: entry.status,
          errorCode: entry.errorCode,
          model: entry.model,
          tokenId: entry.tokenId,
          team: entry.team,
          project: entry.project,
          sessionId: entry.sessionId,
          credential: entry.upstream,
          upstreamModel: entry.upstreamModel,
          latencyMs: entry.latencyMs,
          firstByteMs: entry.ttfbMs,
          promptTokens: entry.promptTokens,
          completionTokens: entry.completionTokens,
          usageSource: entry.usageSource,
        },
        'request',
      );
      await new Promise((resolve) => setImmediate(resolve));
      const fromPino = JSON.parse(lines.at(-1) as string) as Record<string, unknown>;
      const ours = accessLine(entry, record, fromPino['time'] as number);
      expect(ours.endsWith('}\n')).toBe(true);
      expect(Object.entries(JSON.parse(ours) as Record<string, unknown>)).toEqual(Object.entries(fromPino));
      expect(time).toBeLessThanOrEqual(fromPino['time'] as number);
    }
  });

  it('writes each text field as JSON.stringify does, escapes and all', () => {
    const values = [
      'plain-id_1',
      'a "quoted" name',
      'back\\slash',
      'line\nbreak\ttab\u0000\u001f',
      '\u007f del',
      'ü\u2028é',
      '😀 pair',
      'lone \ud800 high',
      'lone \udfff low',
      '',
    ];
    for (const value of values) {
      const record = new RequestRecord('req_1', 'chat.completions', null);
      record.method = 'POST';
      record.path = '/v1/chat/completions';
      const line = accessLine(entryOf(record, { team: value }), record, 1);
      expect(line).toContain(`,"team":${JSON.stringify(value)},`);
      expect((JSON.parse(line) as Record<string, unknown>)['team']).toBe(JSON.parse(JSON.stringify(value)));
    }
  });

  it('goes to the logger’s own output, after the failed attempts’ warn lines, and only at level info or below', async () => {
    const record = new RequestRecord('req_2', 'chat.completions');
    record.upstreamFailures = [{ upstream: 'openai-a', code: 'upstream_error', failureClass: 'server', status: 500, cause: 'boom' }];
    const info = capture('info');
    accessLog(info.logger, true)(entryOf(record), record);
    await new Promise((resolve) => setImmediate(resolve));
    expect(info.lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(['upstream attempt failed', 'request']);

    const warn = capture('warn');
    accessLog(warn.logger, true)(entryOf(record), record);
    const off = capture('info');
    accessLog(off.logger, false)(entryOf(record), record);
    await new Promise((resolve) => setImmediate(resolve));
    expect(warn.lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(['upstream attempt failed']);
    expect(off.lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(['upstream attempt failed']);
  });

  it("carries a worker's number where pino puts it, as every other line of that worker does", async () => {
    const worker = capture('info', { worker: 2 });
    const record = new RequestRecord('req_3', 'chat.completions');
    record.method = 'POST';
    record.path = '/v1/chat/completions';
    record.clientAddress = '127.0.0.1';
    accessLog(worker.logger, true)(entryOf(record), record);
    worker.logger.info('another line');
    await new Promise((resolve) => setImmediate(resolve));
    const [access, other] = worker.lines.map((line) => Object.keys(JSON.parse(line) as Record<string, unknown>).slice(0, 4));
    expect(access).toEqual(['level', 'time', 'service', 'worker']);
    expect(other).toEqual(access);
    expect((JSON.parse(worker.lines[0] as string) as { worker: number }).worker).toBe(2);
  });
});
