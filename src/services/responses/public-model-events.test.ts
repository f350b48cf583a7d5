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
});
