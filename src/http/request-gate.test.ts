import { afterAll, describe, expect, it } from 'vitest';
import { CallerLimits, type Principal, type TokenAuthenticator } from '../access/index.js';
import type { LimitHolder } from '../access/limit-holders.js';
import { MemoryState, type ChargeOutcome, type Meter } from '../state/index.js';
import type { RequestLogStore } from '../store/index.js';
import { RequestLogQueue, RequestRecord, RequestRecorder } from '../usage/index.js';
import { RequestGate } from './request-gate.js';

/** A memory state whose charges wait, while it is slow, until `answer` is called: a slow round trip to Redis. */
class SlowState extends MemoryState {
  private waiting: Array<() => void> = [];
  private slow = true;
  override async charge(meters: readonly Meter[]): Promise<ChargeOutcome> {
    if (this.slow) await new Promise<void>((resolve) => this.waiting.push(resolve));
    return super.charge(meters);
  }
  /** Answers the charges waiting, and those to come at once. */
  answer(): void {
    this.slow = false;
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

describe('RequestGate.limit', () => {
  const state = new SlowState();
  const rows: unknown[] = [];
  const queue = new RequestLogQueue({ insertBatch: async (batch: unknown[]) => void rows.push(...batch) } as unknown as RequestLogStore, {
    batchSize: 100,
    flushIntervalMs: 60_000,
    maxQueue: 100,
  });
  const limits = new CallerLimits({ state, ledger: async () => ({ tokens: 0, usd: 0 }), onError: () => undefined });
  afterAll(async () => {
    await limits.close();
    await queue.close();
  });

  it('a request whose client left while it was being admitted gives its slot back at once', async () => {
    const team: LimitHolder = { kind: 'team', key: 'team:search', label: 'team "search"', match: { team: 'search' }, limits: { maxConcurrent: 1 } };
    const principal = { holders: [team] } as unknown as Principal;
    const recorder = new RequestRecorder(queue);
    const gate = new RequestGate({} as TokenAuthenticator, recorder, () => undefined, limits);
    const record = new RequestRecord('req_1', 'chat.completions');
    recorder.begin();
    const admitted = gate.limit(principal, record, 10);
    // The client leaves before the admission's round trip comes back: its row is written then.
    recorder.finishIncomplete(record);
    state.answer();
    await admitted;
    await limits.drain();
    expect((await limits.read([team]))['team:search']?.maxConcurrent).toBe(0);
  });
});
