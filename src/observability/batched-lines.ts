/** What the lines are handed on to: sonic-boom, as `pino.destination` makes it (the descriptor's writes, retries and reopening are its). */
export interface LineTarget {
  /** Writes asynchronously, as soon as it can. */
  write(chunk: string): unknown;
  /** Writes what the target itself holds, synchronously. */
  flushSync(): void;
  /** Writes `chunk` synchronously after what the target holds: at exit, where an asynchronous write would never be done. */
  writeAtExit(chunk: string): void;
  reopen?(): void;
}

/** Characters of lines gathered before they are handed on in one piece. */
export const BATCH_CHARACTERS = 65_536;
/** How long a line may wait for its batch to fill before it is handed on anyway. */
export const BATCH_WAIT_MS = 250;

/** Outputs holding lines not yet handed on: at exit they go out (see the process hooks below). */
const holding = new Set<BatchedLines>();

/**
 * Log lines gathered in memory and handed to the target in pieces of about 64 KB, or whatever is
 * there a quarter of a second after the first line of a batch, and at exit. Every line the logger
 * writes goes through it, so lines keep their order.
 *
 * Why not sonic-boom's own `minLength`: sonic-boom keeps its buffer as one string and measures it
 * (`Buffer.byteLength`) at every write, which flattens it: with an access line per request, each
 * request copied the whole buffer so far (4 KB on average with an 8 KB minimum), and the log cost
 * about as much CPU again as the write system calls it saved (docs/performance.md). An array of
 * lines joined once per batch copies each line once; larger batches then also mean fewer writes,
 * each of which is a round trip through libuv's thread pool.
 */
export class BatchedLines {
  private lines: string[] = [];
  private characters = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly target: LineTarget) {}

  write(line: string): boolean {
    this.lines.push(line);
    this.characters += line.length;
    if (this.characters >= BATCH_CHARACTERS) this.handOn();
    else if (this.timer === null) {
      this.timer = setTimeout(() => this.handOn(), BATCH_WAIT_MS);
      this.timer.unref();
      holding.add(this);
    }
    return true;
  }

  /** Hands the lines gathered so far to the target, which writes them as soon as it can. */
  handOn(): void {
    const chunk = this.take();
    if (chunk !== null) this.target.write(chunk);
  }

  /** The lines gathered, as one string (null: none), and the batch emptied. */
  private take(): string | null {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    holding.delete(this);
    if (this.lines.length === 0) return null;
    const chunk = this.lines.length === 1 ? (this.lines[0] as string) : this.lines.join('');
    this.lines = [];
    this.characters = 0;
    return chunk;
  }

  /** Writes every line gathered, and what the target holds, synchronously (pino's `flushSync`). */
  flushSync(): void {
    const chunk = this.take();
    try {
      this.target.flushSync();
    } finally {
      if (chunk !== null) this.target.writeAtExit(chunk);
    }
  }

  /** The target opens its file again (logrotate moved it); the lines gathered so far go to the old one first. */
  reopen(): void {
    this.handOn();
    this.target.reopen?.();
  }
}

// At exit no event loop is left for an asynchronous write: what is gathered is written
// synchronously, whether the loop ran out (`serve` returned) or `process.exit()` was called. Not
// through sonic-boom (pino's own exit hooks may have ended it by then) but by the target's
// `writeAtExit`, after what sonic-boom still holds.
process.on('exit', () => {
  for (const output of [...holding]) {
    try {
      output.flushSync();
    } catch {
      // A descriptor closed or stuck at exit: nobody is left to tell.
    }
  }
});
