import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStores, type Stores } from './index.js';
import type { RequestLogEntry } from './request-log-store.js';

let directory: string;
let stores: Stores | null = null;
let sequence = 0;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'switchyard-wal-'));
});
afterEach(async () => {
  await stores?.close();
  stores = null;
  rmSync(directory, { recursive: true, force: true });
});

function rows(count: number): RequestLogEntry[] {
  return Array.from({ length: count }, () => ({
    id: `req_${String(++sequence).padStart(12, '0')}`,
    clientRequestId: null,
    createdAt: sequence,
    tokenId: 'tok_1',
    team: 'search',
    project: null,
    endpoint: 'chat.completions',
    model: 'gpt-4o-mini',
    upstream: 'openai-a',
    upstreamModel: 'gpt-4o-mini-2024-07-18',
    sessionId: `session-${sequence}`,
    status: 200,
    latencyMs: 1.5,
    ttfbMs: 1.2,
    promptTokens: 10,
    completionTokens: 20,
    cachedTokens: 4,
    cacheWriteTokens: null,
    reasoningTokens: 8,
    costUsd: null,
    clientAddress: '127.0.0.1',
    worker: null,
    usageSource: 'upstream',
    errorCode: null,
    sessionSource: 'inferred',
    affinity: 'kept',
    attempts: [{ credential: 'openai-a', outcome: 'ok', status: 200, ms: 1.5 }],
  }));
}

/** The largest the WAL grew while 10,000 rows were written in batches of 100, as the request-log queue writes them, in pages. */
async function largestWalInPages(checkpointPages: number | undefined): Promise<number> {
  const file = join(directory, `log-${String(checkpointPages)}.db`);
  stores = await openStores(`sqlite:${file}`, checkpointPages === undefined ? {} : { sqliteCheckpointPages: checkpointPages });
  const pageSize = stores.database.sqlite?.pragma('page_size', { simple: true }) as number;
  let largest = 0;
  for (let batch = 0; batch < 100; batch++) {
    await stores.requestLogs.insertBatch(rows(100));
    largest = Math.max(largest, statSync(`${file}-wal`).size);
  }
  expect(await stores.requestLogs.query({ limit: 20_000 })).toHaveLength(10_000);
  await stores.close();
  stores = null;
  return largest / pageSize;
}

describe('SQLite checkpoints', () => {
  // A checkpoint runs inside the commit that crosses the limit, and the WAL starts over after it:
  // the file never grows much past the limit plus one batch (a few dozen pages).
  it('checkpoint after 300 WAL pages by default, keeping each checkpoint (a pause of the event loop) short', async () => {
    const pages = await largestWalInPages(undefined);
    expect(pages).toBeGreaterThan(300);
    expect(pages).toBeLessThan(400);
  });

  it('take the limit from the options', async () => {
    const pages = await largestWalInPages(100);
    expect(pages).toBeGreaterThan(100);
    expect(pages).toBeLessThan(200);
  });
});
