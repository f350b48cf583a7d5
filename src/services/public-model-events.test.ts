import { describe, expect, it } from 'vitest';
import { withPublicModelEvents } from './public-model-events.js';

async function rewritten(pieces: Buffer[]): Promise<Buffer[]> {
  async function* body(): AsyncGenerator<Buffer> {
    yield* pieces;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of withPublicModelEvents(body(), 'public')) chunks.push(chunk);
  return chunks;
}

const created = 'event: response.created\r\ndata: {"type":"response.created","response":{"id":"r","model":"snap-1","output":[]}}\r\n\r\n';
const delta = 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"the \\"response\\": was é"}\n\n';

describe('withPublicModelEvents', () => {
  it('rewrites the response objects, whatever the line endings and however the bytes are cut', async () => {
    const stream = Buffer.from(created + delta + created.replaceAll('created', 'completed'));
    const expected = stream.toString().replaceAll('"snap-1"', '"public"');
    for (const size of [1, 3, 7, 64, stream.length]) {
      const pieces: Buffer[] = [];
      for (let at = 0; at < stream.length; at += size) pieces.push(stream.subarray(at, at + size));
      expect(Buffer.concat(await rewritten(pieces)).toString()).toBe(expected);
    }
  });

  it('hands on the very buffer of lines that carry no response', async () => {
    const piece = Buffer.from(delta);
    const chunks = await rewritten([piece]);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toBe(piece);
  });

  it('hands on a line longer than it holds as it arrives, its beginning rewritten and every other byte as it came', async () => {
    const output = `"${'é'.repeat(700_000)}"`;
    const line = `data: {"type":"response.completed","response":{"id":"r","model":"snap-1","output":[${output}]}}\n\n`;
    const stream = Buffer.from(line + created);
    const pieces: Buffer[] = [];
    // Odd-sized pieces cut two-byte characters apart, also where the held part ends.
    for (let at = 0; at < stream.length; at += 65_537) pieces.push(stream.subarray(at, at + 65_537));
    let handedOnBeforeTheLineEnded = 0;
    let seen = 0;
    const chunks: Buffer[] = [];
    for await (const chunk of withPublicModelEvents(
      (async function* () {
        for (const piece of pieces) {
          seen += piece.length;
          yield piece;
        }
      })(),
      'public',
    )) {
      if (seen < Buffer.byteLength(line)) handedOnBeforeTheLineEnded += chunk.length;
      chunks.push(chunk);
    }
    expect(Buffer.concat(chunks).equals(Buffer.from((line + created).replaceAll('"snap-1"', '"public"')))).toBe(true);
    // Held at most a megabyte of it: the rest went on before the line's end arrived.
    expect(handedOnBeforeTheLineEnded).toBeGreaterThan(Buffer.byteLength(line) - 1024 * 1024 - 65_537 * 2);
  });
});
