import { describe, expect, it } from 'vitest';
import { LogThrottle } from './log-throttle.js';

function recorder() {
  const lines: Array<{ level: string; object: Record<string, unknown>; message: string }> = [];
  return {
    lines,
    logger: {
      error: (object: object, message: string) => lines.push({ level: 'error', object: object as Record<string, unknown>, message }),
      warn: (object: object, message: string) => lines.push({ level: 'warn', object: object as Record<string, unknown>, message }),
      info: (object: object, message: string) => lines.push({ level: 'info', object: object as Record<string, unknown>, message }),
    },
  };
}

describe('LogThrottle', () => {
  it('writes one line per kind per interval, with the count left out, and the stack only on the first', () => {
    let now = 0;
    const { lines, logger } = recorder();
    const throttle = new LogThrottle(logger, 1_000, () => now);
    const error = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', client: { secretKey: 42 } });
    for (; now < 3_000; now += 10) {
      throttle.failure('request-log', error, { pendingRows: 1 }, 'request log write failed');
      throttle.failure('token-watcher', error, {}, 'token change watcher failed');
    }
    expect(lines.map((line) => [line.object['kind'], line.object['suppressed']])).toEqual([
      ['request-log', undefined],
      ['token-watcher', undefined],
      ['request-log', 99],
      ['token-watcher', 99],
      ['request-log', 99],
      ['token-watcher', 99],
    ]);
    expect(lines[0]?.object['err']).toMatchObject({
      type: 'Error',
      message: 'connect ECONNREFUSED 127.0.0.1:5432',
      code: 'ECONNREFUSED',
      stack: expect.any(String),
    });
    expect(lines[2]?.object['err']).not.toHaveProperty('stack');
    expect(JSON.stringify(lines)).not.toContain('secretKey');
  });

  it('says once that a kind that failed works again, and starts over with a stack', () => {
    let now = 0;
    const { lines, logger } = recorder();
    const throttle = new LogThrottle(logger, 1_000, () => now);
    throttle.recovered('request-log', {}, 'request log writes resumed');
    expect(lines).toEqual([]);
    throttle.failure('request-log', new Error('down'), {}, 'request log write failed');
    throttle.failure('request-log', new Error('down'), {}, 'request log write failed');
    throttle.recovered('request-log', {}, 'request log writes resumed');
    now += 10;
    throttle.failure('request-log', new Error('down again'), {}, 'request log write failed');
    expect(lines.map((line) => [line.level, line.message, line.object['failures']])).toEqual([
      ['warn', 'request log write failed', undefined],
      ['info', 'request log writes resumed', 2],
      ['warn', 'request log write failed', undefined],
    ]);
    expect(lines[2]?.object['err']).toHaveProperty('stack');
  });
});
