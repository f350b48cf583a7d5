import type { Redis } from 'ioredis';
import { chargeMeters, type MeterRecord } from './meter-rules.js';
import { parseRecord, recordText } from './meter-record-text.js';
import { COMMIT_RECORDS, runScript } from './redis-scripts.js';
import type { ChargeOutcome, Meter } from './shared-state.js';

/** Records remembered as last seen, for the next charge's first guess; the least recently used go past this. */
const SEEN_RECORDS = 10_000;
/** A step tried this many times while other processes kept changing its records fails (the caller lets the request through, as when Redis is away). */
const MOST_ATTEMPTS = 100;

interface Seen {
  readonly text: string;
  readonly record: MeterRecord;
}

interface Waiting {
  readonly meters: readonly Meter[];
  readonly resolve: (outcome: ChargeOutcome) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * RedisState's `charge`. A group's meters are one record (meter-record-text.ts). The rules run
 * here (meter-rules.ts, the same as MemoryState's), on the records as this process last saw them;
 * one script then writes the records changed, but only if every record read is still what Redis
 * holds (COMMIT_RECORDS). If another process changed one meanwhile, the script answers the
 * records as they are and the step is applied again to them, so a step is decided on exactly what
 * Redis holds, as if it ran there, without a round trip to read first.
 *
 * One script is in flight at a time: the charges asked meanwhile wait, are applied in the order
 * asked to the records as the last script left them, and go together in the next (a group
 * commit). So this process's own charges never collide, and a record that several of its
 * requests change is written once.
 *
 * Time: the rules' `now` is this process's clock plus the server's offset from it, as the last
 * answer showed (TIME in the script): leases and lifetimes run on Redis's clock, within a round
 * trip, like the records' own time to live.
 */
export class RedisMeters {
  /**
   * Redis key → the record's text as last seen ('' for none), and the record it holds as this
   * process wrote or read it: a step that finds its guess right (the common case) then parses
   * nothing. A record taken from here is changed in place by the step, so it is dropped unless
   * the step is written.
   */
  private readonly seen = new Map<string, Seen>();
  private waiting: Waiting[] = [];
  private committing = false;
  private scheduled = false;
  /** The server's clock minus this process's; null until Redis has first been asked. */
  private offsetMs: number | null = null;

  constructor(
    private readonly client: Redis,
    private readonly recordKey: (group: string) => string,
    private readonly clock: () => number = Date.now,
  ) {}

  charge(meters: readonly Meter[]): Promise<ChargeOutcome> {
    return new Promise<ChargeOutcome>((resolve, reject) => {
      this.waiting.push({ meters, resolve, reject });
      this.schedule();
    });
  }

  /** The charges asked in this turn of the event loop go together. */
  private schedule(): void {
    if (this.committing || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.commitWaiting();
    });
  }

  private async commitWaiting(): Promise<void> {
    if (this.committing || this.waiting.length === 0) return;
    this.committing = true;
    const batch = this.waiting;
    this.waiting = [];
    try {
      const outcomes = await this.commit(batch);
      for (let index = 0; index < batch.length; index++) (batch[index] as Waiting).resolve(outcomes[index] as ChargeOutcome);
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    } finally {
      this.committing = false;
      if (this.waiting.length > 0) this.schedule();
    }
  }

  private async commit(batch: readonly Waiting[]): Promise<ChargeOutcome[]> {
    const keys: string[] = [];
    const indexOfKey = new Map<string, number>();
    const recordIndex = new Map<Meter, number>();
    for (const { meters } of batch) {
      for (const meter of meters) {
        const key = this.recordKey(meter.group ?? meter.key);
        let index = indexOfKey.get(key);
        if (index === undefined) indexOfKey.set(key, (index = keys.push(key) - 1));
        recordIndex.set(meter, index);
      }
    }
    const guesses = keys.map((key) => this.seen.get(key));
    let texts = guesses.map((guess) => guess?.text ?? '');
    // The first step waits for the server's time: a lifetime counted from a clock minutes off would be minutes off.
    this.offsetMs ??= await this.serverOffset();
    for (let attempt = 1; ; attempt++) {
      const now = this.clock() + this.offsetMs;
      // The records remembered are changed in place: forgotten until the step is written.
      const records = attempt === 1 ? guesses.map((guess) => guess?.record ?? readRecord('')) : texts.map(readRecord);
      if (attempt === 1) for (const key of keys) this.seen.delete(key);
      const changed = new Set<MeterRecord>();
      const recordOf = (meter: Meter): MeterRecord => records[recordIndex.get(meter) as number] as MeterRecord;
      const markChanged = (record: MeterRecord): void => {
        changed.add(record);
      };
      const outcomes = batch.map(({ meters }) => chargeMeters(meters, recordOf, now, markChanged));
      const writes: string[] = [];
      const written = new Map<number, string>();
      for (let index = 0; index < records.length; index++) {
        const record = records[index] as MeterRecord;
        if (!changed.has(record)) continue;
        const text = recordText(record, now);
        writes.push(String(index + 1), text?.text ?? '', String(text?.ttlMs ?? 1));
        written.set(index, text?.text ?? '');
      }
      const sentAt = this.clock();
      // When this fails, whether it ran is not known: nothing of these records is remembered, so the next step reads them afresh.
      const reply = await runScript(this.client, COMMIT_RECORDS, keys, [...texts, String(written.size), ...writes]);
      const { committed, serverMs, current } = commitReply(reply, keys.length);
      this.offsetMs = serverMs - (sentAt + this.clock()) / 2;
      if (committed) {
        for (let index = 0; index < keys.length; index++)
          this.remember(keys[index] as string, { text: written.get(index) ?? (texts[index] as string), record: records[index] as MeterRecord });
        return outcomes;
      }
      texts = current;
      if (attempt >= MOST_ATTEMPTS) throw new Error(`charge: other processes changed its records ${MOST_ATTEMPTS} times in a row`);
    }
  }

  private async serverOffset(): Promise<number> {
    const sentAt = this.clock();
    const [seconds, microseconds] = await this.client.time();
    return serverMilliseconds(seconds, microseconds) - (sentAt + this.clock()) / 2;
  }

  private remember(key: string, seen: Seen): void {
    this.seen.delete(key);
    this.seen.set(key, seen);
    if (this.seen.size > SEEN_RECORDS) this.seen.delete(this.seen.keys().next().value as string);
  }
}

/**
 * A record's text as a record; one that cannot be read (only a defect would write it) as none, so
 * that the step replaces it rather than every request of its holder failing to be counted.
 */
function readRecord(text: string): MeterRecord {
  try {
    return parseRecord(text);
  } catch {
    return parseRecord('');
  }
}

/** Redis's TIME (seconds and microseconds) in milliseconds. */
function serverMilliseconds(seconds: unknown, microseconds: unknown): number {
  return Number(seconds) * 1_000 + Math.floor(Number(microseconds) / 1_000);
}

/** COMMIT_RECORDS's reply: whether it wrote, the server's time, and the records as they are when it did not. */
function commitReply(reply: unknown, count: number): { committed: boolean; serverMs: number; current: string[] } {
  if (!Array.isArray(reply) || reply.length < 3) throw new Error('unexpected reply from Redis to charge');
  const [flag, seconds, microseconds] = reply as unknown[];
  const serverMs = serverMilliseconds(seconds, microseconds);
  if (flag === 1) return { committed: true, serverMs, current: [] };
  const current = reply.slice(3);
  if (current.length !== count || !current.every((text): text is string => typeof text === 'string')) throw new Error('unexpected reply from Redis to charge');
  return { committed: false, serverMs, current };
}
