import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ResponsesStreamTap } from './responses-stream-tap.js';

const RECORDED = readFileSync(new URL('../../../test/fixtures/chatgpt/stream-text.sse', import.meta.url));

async function* pieces(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let start = 0; start < bytes.length; start += size) yield bytes.subarray(start, start + size);
}

async function drain(tap: ResponsesStreamTap, body: AsyncIterableIterator<Buffer>): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const chunk of tap.tap(body)) out.push(chunk);
  return out;
}

describe('ResponsesStreamTap', () => {
  it('hands every chunk on untouched, and reads the id from the first event and the usage from the last', async () => {
    const tap = new ResponsesStreamTap(1 << 20);
    const body = pieces(RECORDED, 7);
    const iterator = tap.tap(body);
    const first = await iterator.next();
    expect(first.value).toEqual(RECORDED.subarray(0, 7));
    const out = [first.value as Buffer];
    const firstEventEnds = RECORDED.indexOf('\n\n') + 2;
    for await (const chunk of iterator) {
      // The tap has read the chunk it hands on: known as soon as the event that names it has gone by.
      const passed = (out.length + 1) * 7;
      expect(tap.responseId).toBe(passed >= firstEventEnds ? 'resp_sanitized_streaming' : null);
      out.push(chunk);
    }
    expect(Buffer.concat(out).equals(RECORDED)).toBe(true);
    expect(tap.usage).toEqual({ promptTokens: 12, completionTokens: 2, totalTokens: 14, cachedTokens: 0, reasoningTokens: 0 });
  });

  it('finds them in a stream without event: lines too, and knows nothing of a stream cut before its end', async () => {
    const dataOnly = Buffer.from(RECORDED.toString('utf8').replace(/^event: .*\n/gm, ''));
    const tap = new ResponsesStreamTap(1 << 20);
    await drain(tap, pieces(dataOnly, 13));
    expect(tap.responseId).toBe('resp_sanitized_streaming');
    expect(tap.usage?.totalTokens).toBe(14);

    const cut = new ResponsesStreamTap(1 << 20);
    await drain(cut, pieces(RECORDED.subarray(0, RECORDED.length - 200), 64));
    expect(cut.responseId).toBe('resp_sanitized_streaming');
    expect(cut.usage).toBeNull();
  });
});
