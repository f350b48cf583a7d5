import { describe, expect, it } from 'vitest';
import { parseRecord, recordText } from './meter-record-text.js';
import { emptyRecord } from './meter-rules.js';

describe('a meter record as text', () => {
  it('reads back what it wrote, keys and owners of any text, numbers exact, without what has expired', () => {
    const record = emptyRecord();
    record.counts.set('__proto__', { value: 0.1 + 0.2, expiresAtMs: 5_000 });
    record.counts.set('team:"quoted"\\:rpm', { value: -3, expiresAtMs: 2_000 });
    record.counts.set('team:old', { value: 9, expiresAtMs: 1_000 });
    record.slotSets.set('team:in-flight', {
      owners: new Map([
        ['host/1/ab.0', { slots: 2, leaseEndMs: 3_000 }],
        ['host/2/cd.0', { slots: 5, leaseEndMs: 900 }],
      ]),
      total: 7,
      earliestEndMs: 900,
    });
    const written = recordText(record, 1_000);
    expect(written?.ttlMs).toBe(4_000);
    const read = parseRecord(written?.text ?? '');
    expect([...read.counts]).toEqual([
      ['__proto__', { value: 0.1 + 0.2, expiresAtMs: 5_000 }],
      ['team:"quoted"\\:rpm', { value: -3, expiresAtMs: 2_000 }],
    ]);
    expect(read.slotSets.get('team:in-flight')).toEqual({
      owners: new Map([['host/1/ab.0', { slots: 2, leaseEndMs: 3_000 }]]),
      total: 2,
      earliestEndMs: 3_000,
    });
  });

  it('writes nothing for a record with nothing live, and reads none from the empty text', () => {
    const record = emptyRecord();
    record.counts.set('team:rpm', { value: 1, expiresAtMs: 1_000 });
    expect(recordText(record, 1_000)).toBeNull();
    expect(parseRecord('')).toEqual(emptyRecord());
  });

  it('refuses text that is not a record', () => {
    for (const text of ['null', '3', '{"c":{"k":[1]}}', '{"s":{"k":{"o":"x"}}}', 'not json']) expect(() => parseRecord(text)).toThrow();
  });
});
