import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestLogEntry } from '../test/support/request-log-entries.js';
import { startRequestLogRetention, startUsageSummaries } from './gateway-retention.js';
import { createLogger } from './observability/logger.js';
import { openStores, type Stores } from './store/index.js';

const DAY = 86_400_000;
const FAST = { maintainAfterMs: 1, firstPassAfterMs: 2, intervalMs: 60_000 };

function capturedLogger(): { logger: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('info', destination), lines };
}

describe('the gateway’s retention passes', () => {
  let stores: Stores;

  beforeEach(async () => {
    stores = await openStores('sqlite::memory:');
    const now = Date.now();
    await stores.requestLogs.insertBatch([requestLogEntry(now - 40 * DAY), requestLogEntry(now - 35 * DAY), requestLogEntry(now - 60_000)]);
  });
  afterEach(async () => {
    await stores.close();
  });

  it('runs a pass after the start and logs what it removed, in one info line', async () => {
    const { logger, lines } = capturedLogger();
    const schedule = startRequestLogRetention({ request_log: { retention: '30d' } as never }, stores, logger, null, FAST);
    try {
      for (let attempt = 0; attempt < 400 && !lines.some((line) => String(line['msg']).startsWith('request log retention pass')); attempt++) await sleep(5);
    } finally {
      await schedule?.stop();
    }
    const pass = lines.filter((line) => String(line['msg']).startsWith('request log retention pass'));
    expect(pass).toHaveLength(1);
    expect(pass[0]).toMatchObject({ level: 30, retention: '30d', rows_removed: 2, rows_deleted: 2, complete: true, duration_ms: expect.any(Number) });
    expect(pass[0]?.['msg']).toMatch(/^request log retention pass: removed 2 rows in \d+ ms$/);
    expect(await stores.requestLogs.count()).toBe(1);
  });

  it('runs nothing in a worker other than the first, nor with forever on SQLite', async () => {
    const { logger } = capturedLogger();
    expect(startRequestLogRetention({ request_log: { retention: '30d' } as never }, stores, logger, 2, FAST)).toBeNull();
    expect(startRequestLogRetention({ request_log: { retention: 'forever' } as never }, stores, logger, null, FAST)).toBeNull();
    const first = startRequestLogRetention({ request_log: { retention: '30d' } as never }, stores, logger, 1, FAST);
    expect(first).not.toBeNull();
    await first?.stop();
  });
});

describe('the gateway’s usage summary passes', () => {
  it('sum the hours marked before the start in the first pass, with one info line for the catch-up; none in a worker other than the first', async () => {
    const stores = await openStores('sqlite::memory:');
    try {
      const now = Date.now();
      // 30 hours of traffic, the newest two hours ago.
      await stores.requestLogs.insertBatch(Array.from({ length: 30 }, (_, index) => requestLogEntry(now - (index + 2) * 3_600_000)));
      const { logger, lines } = capturedLogger();
      expect(startUsageSummaries(stores, logger, 2, { firstPassAfterMs: 1, intervalMs: 60_000 })).toBeNull();
      const schedule = startUsageSummaries(stores, logger, 1, { firstPassAfterMs: 1, intervalMs: 60_000 });
      try {
        for (let attempt = 0; attempt < 400 && !lines.some((line) => String(line['msg']).startsWith('usage summary pass')); attempt++) await sleep(5);
      } finally {
        await schedule?.stop();
      }
      const pass = lines.filter((line) => String(line['msg']).startsWith('usage summary pass'));
      expect(pass).toHaveLength(1);
      expect(pass[0]).toMatchObject({ level: 30, hours: 30, complete: true });
      const left = await stores.database.db.selectFrom('request_usage_pending').select('hour_start').execute();
      expect(left).toEqual([]);
    } finally {
      await stores.close();
    }
  });
});
