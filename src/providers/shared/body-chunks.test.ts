import { describe, expect, it } from 'vitest';
import { BodyChunks, readWhole } from './body-chunks.js';

async function* chunks(...parts: string[]): AsyncGenerator<Buffer> {
  for (const part of parts) yield Buffer.from(part);
}

describe('BodyChunks', () => {
  it('keeps what fits under the cap and says when a chunk went past it', () => {
    const body = new BodyChunks();
    expect(body.add(Buffer.from('abc'), 5)).toBe(true);
    expect(body.add(Buffer.from('def'), 5)).toBe(false);
    expect(body.concat().toString()).toBe('abcde');
    expect(new BodyChunks().concat()).toHaveLength(0);
  });
});

describe('readWhole', () => {
  it('reads a streamed body whole, and fails past max_response_bytes', async () => {
    expect((await readWhole(chunks('ab', 'cd'), 4, 'up')).toString()).toBe('abcd');
    await expect(readWhole(chunks('ab', 'cde'), 4, 'up')).rejects.toMatchObject({
      code: 'upstream_invalid_response',
      message: 'Upstream up answered with more than 4 bytes (max_response_bytes).',
    });
  });
});
