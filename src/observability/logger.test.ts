import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import { LogThrottle } from './log-throttle.js';

const KEY = 'sk-proj-AbCdEfGh1234567890xyzAbCdEf';

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, stream };
}

describe('the logger', () => {
  it('masks a key an upstream quoted in an error message, its stack and its cause', () => {
    const { lines, stream } = capture();
    const logger = createLogger('info', stream);
    const error = new Error(`Incorrect API key provided: ${KEY}`, { cause: new Error(`sent ${KEY}`) });
    logger.warn({ err: error }, 'stream failed after the first byte');
    const line = lines.join('');
    expect(line).toContain('Incorrect API key provided: sk-p');
    expect(line).not.toContain(KEY);
  });

  it('masks it in the throttled failure lines too', () => {
    const { lines, stream } = capture();
    const throttle = new LogThrottle(createLogger('info', stream), 10_000);
    throttle.failure('kind', new Error(`refused ${KEY}`), {}, 'a failure');
    expect(lines.join('')).not.toContain(KEY);
  });
});
