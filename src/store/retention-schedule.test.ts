import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { scheduleRetention, type RequestLogRetention, type RetentionPass } from './request-log-retention.js';

function pass(): RetentionPass {
  return {
    skipped: null,
    cutoff: 0,
    rowsDeleted: 1,
    partitionsDropped: [],
    partitionsCreated: [],
    partitionsDeferred: [],
    pagesFreed: 0,
    complete: true,
    durationMs: 1,
  };
}

async function until(probe: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    if (probe()) return;
    await sleep(5);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('retention passes on timers', () => {
  it('maintains first, then passes one after another; a failed pass is told and the next one runs; stop ends them', async () => {
    const calls: string[] = [];
    const told: string[] = [];
    let prunes = 0;
    const retention: RequestLogRetention = {
      retentionMs: 1,
      maintain: async () => {
        calls.push('maintain');
        return pass();
      },
      prune: async () => {
        prunes += 1;
        calls.push('prune');
        if (prunes === 2) throw new Error('database away');
        return pass();
      },
    };
    const schedule = scheduleRetention(retention, {
      maintainAfterMs: 1,
      firstPassAfterMs: 2,
      intervalMs: 2,
      onPass: (_pass, kind) => told.push(kind),
      onError: (error, kind) => told.push(`${kind} failed: ${(error as Error).message}`),
    });
    await until(() => prunes >= 4, 'four passes');
    await schedule.stop();
    const after = calls.length;
    expect(calls.slice(0, 5)).toEqual(['maintain', 'prune', 'prune', 'prune', 'prune']);
    expect(told.slice(0, 4)).toEqual(['maintenance', 'pass', 'pass failed: database away', 'pass']);
    await sleep(30);
    expect(calls.length).toBe(after);
  });

  it('stops a pass under way at its next batch, and resolves once it has', async () => {
    let signalled: AbortSignal | undefined;
    let ended = false;
    const retention: RequestLogRetention = {
      retentionMs: 1,
      maintain: async () => pass(),
      prune: async (signal) => {
        signalled = signal;
        // A pass that goes on until it is stopped.
        while (signal?.aborted !== true) await sleep(2);
        ended = true;
        return { ...pass(), complete: false };
      },
    };
    const schedule = scheduleRetention(retention, {
      maintainAfterMs: 1,
      firstPassAfterMs: 1,
      intervalMs: 1_000,
      onPass: () => undefined,
      onError: () => undefined,
    });
    await until(() => signalled !== undefined, 'the pass to start');
    await schedule.stop();
    expect(ended).toBe(true);
  });
});
