import { emptyRecord, type Holding, type MeterRecord } from './meter-rules.js';

/**
 * A group's meters as RedisState keeps them: JSON of `{ "c": { key: [value, expiresAt] },
 * "s": { key: { owner: [slots, leaseEnd] } } }` (times in ms on the server's clock). Redis never
 * reads inside it: it only compares and replaces whole records (redis-meters.ts), so the text is
 * whatever the gateway reads and writes fastest; JSON keeps every double exact.
 */
interface RecordText {
  c?: Record<string, [number, number]>;
  s?: Record<string, Record<string, [number, number]>>;
}

/**
 * The record, or what it holds at `now` written to be kept `ttlMs` (until its longest-lived entry
 * ends); null when nothing is live (the key is deleted). Written by hand rather than through
 * objects and JSON.stringify, at half the cost: this runs for each holder of each request that
 * Redis counts. Amounts are checked finite before they reach a record, so every number is JSON.
 */
export function recordText(record: MeterRecord, now: number): { text: string; ttlMs: number } | null {
  let last = now;
  let counts = '';
  for (const [key, { value, expiresAtMs }] of record.counts) {
    if (expiresAtMs <= now) continue;
    counts += `${counts === '' ? '' : ','}${JSON.stringify(key)}:[${value},${expiresAtMs}]`;
    if (expiresAtMs > last) last = expiresAtMs;
  }
  let slotSets = '';
  for (const [key, set] of record.slotSets) {
    let owners = '';
    for (const [owner, { slots, leaseEndMs }] of set.owners) {
      if (leaseEndMs <= now) continue;
      owners += `${owners === '' ? '' : ','}${JSON.stringify(owner)}:[${slots},${leaseEndMs}]`;
      if (leaseEndMs > last) last = leaseEndMs;
    }
    if (owners !== '') slotSets += `${slotSets === '' ? '' : ','}${JSON.stringify(key)}:{${owners}}`;
  }
  if (last <= now) return null;
  const parts: string[] = [];
  if (counts !== '') parts.push(`"c":{${counts}}`);
  if (slotSets !== '') parts.push(`"s":{${slotSets}}`);
  return { text: `{${parts.join(',')}}`, ttlMs: Math.ceil(last - now) };
}

/** The record a text holds ('' for none). Throws on text that is not one: only the gateway writes these keys. */
export function parseRecord(text: string): MeterRecord {
  const record = emptyRecord();
  if (text === '') return record;
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null) throw new Error('a meter record in Redis is not an object');
  const { c: counts, s: slotSets } = parsed as RecordText;
  if (counts !== undefined) {
    for (const key of Object.keys(counts)) {
      const [value, expiresAtMs] = pair(counts[key]);
      record.counts.set(key, { value, expiresAtMs });
    }
  }
  if (slotSets !== undefined) {
    for (const key of Object.keys(slotSets)) {
      const owners = new Map<string, Holding>();
      let total = 0;
      let earliestEndMs = Number.POSITIVE_INFINITY;
      const stored = slotSets[key] ?? {};
      for (const owner of Object.keys(stored)) {
        const [slots, leaseEndMs] = pair(stored[owner]);
        owners.set(owner, { slots, leaseEndMs });
        total += slots;
        if (leaseEndMs < earliestEndMs) earliestEndMs = leaseEndMs;
      }
      if (owners.size > 0) record.slotSets.set(key, { owners, total, earliestEndMs });
    }
  }
  return record;
}

function pair(value: unknown): [number, number] {
  if (!Array.isArray(value) || typeof value[0] !== 'number' || typeof value[1] !== 'number')
    throw new Error('a meter record in Redis holds an entry that is not two numbers');
  return [value[0], value[1]];
}
