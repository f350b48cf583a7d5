import { LabelValues } from './label-values.js';

/** A level of the series' tree: the next label's values, and at the last label the series itself. */
interface Branch<Child> {
  readonly next: Map<string, Branch<Child>>;
  child: Child | null;
}

/**
 * The children of one labelled metric (a counter's or a histogram's series), each made once and
 * kept by its label values, in a tree of maps (no key string is built on the request path). Every
 * label has its own cap (`LabelValues`): past it a new value is counted under `other`, so the
 * series stay bounded whatever callers send. A value past the cap is not kept by its own name.
 */
export class BoundedSeries<Child> {
  private readonly root: Branch<Child> = { next: new Map(), child: null };
  private readonly labels: readonly LabelValues[];
  private count = 0;

  constructor(
    readonly metricName: string,
    labelNames: readonly string[],
    cap: number,
    private readonly make: (values: readonly string[]) => Child,
    onCapReached: (metric: string, label: string, cap: number) => void,
  ) {
    this.labels = labelNames.map((label) => new LabelValues(cap, () => onCapReached(metricName, label, cap)));
  }

  /** How many series there are. */
  get size(): number {
    return this.count;
  }

  /** The series of these label values (in the metric's label order). */
  of(...values: string[]): Child {
    let branch = this.root;
    for (let index = 0; index < values.length; index++) {
      let next = branch.next.get(values[index] as string);
      if (next === undefined) {
        // A value not seen at this place: through its label's cap (which may make it `other`).
        const value = (this.labels[index] as LabelValues).valueOf(values[index] as string);
        values[index] = value;
        next = branch.next.get(value);
        if (next === undefined) {
          next = { next: new Map(), child: null };
          branch.next.set(value, next);
        }
      }
      branch = next;
    }
    if (branch.child === null) {
      branch.child = this.make(values);
      this.count++;
    }
    return branch.child;
  }
}
