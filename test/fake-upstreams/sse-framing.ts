// Byte-level SSE framing for the fake upstreams.
//
// Real upstreams (and the proxies in front of them) do not hand a client one
// tidy `data:` event per read. A gateway's SSE parser has to cope with events,
// lines, the `data:` prefix and multi-byte UTF-8 characters arriving split
// across reads, with CRLF line ends, and with comment lines. These helpers
// produce exactly those byte streams so the tests can prove it does.

export type LineEnding = 'lf' | 'crlf';

/**
 * Piece sizes, cycled. Odd, co-prime-ish sizes so that over a stream the cut
 * points land on every kind of boundary: inside `data:`, between `\r` and `\n`,
 * inside a 2/3/4-byte UTF-8 sequence, and across event boundaries.
 */
export const SPLIT_SIZES: readonly number[] = [1, 3, 7, 13, 29];

export function lineTerminator(lineEnding: LineEnding): string {
  return lineEnding === 'crlf' ? '\r\n' : '\n';
}

/** One `data:` event: the field line plus the blank line that dispatches it. */
export function frameDataEvent(data: string, lineEnding: LineEnding): string {
  const eol = lineTerminator(lineEnding);
  return `data: ${data}${eol}${eol}`;
}

/**
 * A comment line followed by a blank line, as keep-alive senders emit it. The
 * blank line dispatches nothing because no data field was seen, which is the
 * quirk a naive "split on blank line, JSON.parse the block" parser trips on.
 */
export function frameComment(text: string, lineEnding: LineEnding): string {
  const eol = lineTerminator(lineEnding);
  return `: ${text}${eol}${eol}`;
}

/**
 * Cuts a byte stream into pieces whose sizes cycle through `sizes`. Bytes that
 * do not fill the current piece are held back and prepended to the next push,
 * so pieces straddle event boundaries instead of always ending on one.
 */
export class ByteSplitter {
  private pending: Buffer = Buffer.alloc(0);
  private sizeIndex = 0;

  constructor(private readonly sizes: readonly number[] = SPLIT_SIZES) {
    if (sizes.length === 0 || sizes.some((size) => !Number.isInteger(size) || size < 1)) {
      throw new RangeError('ByteSplitter needs at least one positive integer size');
    }
  }

  /** Adds bytes; returns every piece that is now complete. */
  push(bytes: Buffer): Buffer[] {
    this.pending = Buffer.concat([this.pending, bytes]);
    const pieces: Buffer[] = [];
    while (this.pending.length >= this.currentSize()) {
      const size = this.currentSize();
      pieces.push(this.pending.subarray(0, size));
      this.pending = this.pending.subarray(size);
      this.sizeIndex = (this.sizeIndex + 1) % this.sizes.length;
    }
    return pieces;
  }

  /** Returns the held-back tail (if any) as a final, short piece. */
  flush(): Buffer[] {
    if (this.pending.length === 0) return [];
    const tail = this.pending;
    this.pending = Buffer.alloc(0);
    this.sizeIndex = (this.sizeIndex + 1) % this.sizes.length;
    return [tail];
  }

  private currentSize(): number {
    // The constructor guarantees a non-empty list, so the index is in range.
    return this.sizes[this.sizeIndex] ?? 1;
  }
}

/** Convenience: split a whole buffer at once (push + flush). */
export function splitIntoPieces(bytes: Buffer, sizes: readonly number[] = SPLIT_SIZES): Buffer[] {
  const splitter = new ByteSplitter(sizes);
  return [...splitter.push(bytes), ...splitter.flush()];
}
