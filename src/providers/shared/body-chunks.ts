import { GatewayError } from '../../errors/index.js';

/** Body chunks gathered up to a cap, without copying until the end. */
export class BodyChunks {
  private first: Buffer | null = null;
  private rest: Buffer[] | null = null;
  private size = 0;

  /** Adds what fits under `limit`; false when the chunk went past it (what fitted is kept). */
  add(chunk: Buffer, limit: number): boolean {
    const room = limit - this.size;
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, Math.max(room, 0));
    if (kept.length > 0) {
      if (this.first === null) this.first = kept;
      else (this.rest ??= [this.first]).push(kept);
      this.size += kept.length;
    }
    return kept.length === chunk.length;
  }

  concat(): Buffer {
    return this.rest !== null ? Buffer.concat(this.rest) : (this.first ?? Buffer.alloc(0));
  }
}

/**
 * A streamed body read whole, as the upstream client reads a JSON answer: past `maxBytes`
 * (`max_response_bytes`) the call fails, and the body is closed.
 */
export async function readWhole(body: AsyncIterableIterator<Buffer>, maxBytes: number, credentialId: string): Promise<Buffer> {
  const chunks = new BodyChunks();
  for await (const chunk of body) {
    if (!chunks.add(chunk, maxBytes))
      throw new GatewayError('upstream_invalid_response', `Upstream ${credentialId} answered with more than ${maxBytes} bytes (max_response_bytes).`);
  }
  return chunks.concat();
}
