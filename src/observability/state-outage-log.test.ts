import { describe, expect, it } from 'vitest';
import { StateOutageLog } from './state-outage-log.js';

function recording() {
  const lines: Array<{ level: string; fields: object; message: string }> = [];
  let now = 1_000;
  const log = new StateOutageLog(
    {
      warn: (fields, message) => lines.push({ level: 'warn', fields, message }),
      info: (fields, message) => lines.push({ level: 'info', fields, message }),
    },
    () => now,
  );
  return { log, lines, advance: (milliseconds: number) => (now += milliseconds) };
}

describe('StateOutageLog', () => {
  it('tells one outage found by several parts, again and again, as one warning and one recovery', () => {
    const { log, lines, advance } = recording();
    log.lost('routing', new Error('connection closed'));
    log.lost('request path', new Error('timed out'));
    log.lost('routing', new Error('connection closed'));
    expect(log.down).toBe(true);
    advance(30_000);
    log.found('routing');
    // The breaker has not found it yet: still one outage.
    expect(log.down).toBe(true);
    log.found('request path');
    log.found('request path');
    expect(log.down).toBe(false);
    expect(lines.map(({ level }) => level)).toEqual(['warn', 'info']);
    expect(lines[0]?.fields).toMatchObject({ part: 'routing' });
    expect(lines[1]).toMatchObject({ fields: { downForMs: 30_000 }, message: expect.stringMatching(/^shared state answers again after 30 s/) });
  });

  it('tells each outage of its own', () => {
    const { log, lines } = recording();
    log.lost('routing', new Error('first'));
    log.found('routing');
    log.lost('request path', new Error('second'));
    log.found('request path');
    expect(lines.map(({ level }) => level)).toEqual(['warn', 'info', 'warn', 'info']);
  });

  it('says nothing of a part that finds what it never lost', () => {
    const { log, lines } = recording();
    log.found('routing');
    expect(lines).toEqual([]);
  });
});
