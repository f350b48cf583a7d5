import { describe, expect, it } from 'vitest';
import { maskedErrorEvents } from './masked-error-events.js';

async function passed(pieces: string[]): Promise<string[]> {
  async function* source(): AsyncGenerator<Buffer> {
    for (const piece of pieces) yield Buffer.from(piece);
  }
  const out: string[] = [];
  for await (const piece of maskedErrorEvents(source())) out.push(piece.toString('utf8'));
  return out;
}

const KEY = 'sk-proj-abcdefghijklmnop';

describe('maskedErrorEvents', () => {
  it('passes events that carry no error text as the same bytes, held only until their end', async () => {
    const delta = `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"${KEY}"}\n\n`;
    expect(await passed([delta.slice(0, 20), delta.slice(20), delta])).toEqual([delta, delta]);
  });

  it('masks keys in error and response.failed events, cut anywhere, and leaves the rest alone', async () => {
    const error = `event: error\ndata: {"type":"error","message":"Incorrect API key provided: ${KEY}"}\n\n`;
    const failed = `data: {"type":"response.failed","response":{"error":{"message":"Bearer abcdefghijkl0123"}}}\r\n\r\n`;
    const text = `data: {"type":"response.output_text.delta","delta":"${KEY}"}\n\n${error}${failed}`;
    for (const cut of [1, 30, text.indexOf(KEY, 80) + 5, text.length - 2, text.length - 1]) {
      const out = (await passed([text.slice(0, cut), text.slice(cut)])).join('');
      expect(out).toBe(text.replace(`provided: ${KEY}`, 'provided: sk-p…[redacted]').replace('Bearer abcdefghijkl0123', 'Bearer abcd…[redacted]'));
    }
  });

  it('finds a key behind a JSON escape, and rewrites only that event', async () => {
    const delta = `data: {"type":"response.output_text.delta","delta":"x"}\n\n`;
    const error = `event: error\ndata: {"type":"error", "message":"key:\\n${KEY}\\u0020and \\u0073k-ant-api03-abcdefghijkl"}\n\n`;
    const out = (await passed([delta + error])).join('');
    expect(out).toBe(`${delta}event: error\ndata: {"type":"error","message":"key:\\nsk-p…[redacted] and sk-a…[redacted]"}\n\n`);
  });

  it('masks an error event the upstream cut off without its end', async () => {
    expect((await passed([`event: error\ndata: {"message":"${KEY}`])).join('')).toBe('event: error\ndata: {"message":"sk-p…[redacted]');
  });
});
