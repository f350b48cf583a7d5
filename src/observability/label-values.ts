/** The value a label takes once its cap is reached: every new value is counted under it. */
export const OVERFLOW_LABEL_VALUE = 'other';

/**
 * The distinct values one label of one metric may take. The first `cap` values seen keep their
 * name; every later new value becomes `other`, and `onCapReached` is told once, so that a caller
 * who sends many names can never grow the number of series past a known bound.
 */
export class LabelValues {
  private readonly seen = new Set<string>();
  private warned = false;

  constructor(
    private readonly cap: number,
    private readonly onCapReached: () => void,
  ) {}

  valueOf(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size < this.cap) {
      this.seen.add(value);
      return value;
    }
    if (!this.warned) {
      this.warned = true;
      this.onCapReached();
    }
    return OVERFLOW_LABEL_VALUE;
  }
}
