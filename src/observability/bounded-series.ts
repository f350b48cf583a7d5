import { LabelValues } from './label-values.js';

/**
 * The children of one labelled metric (prom-client's `metric.labels(...)`: a counter's or a
 * histogram's series), each made once and kept by its label values. Every label has its own cap
 * (`LabelValues`): past it a new value is counted under `other`, so the series, and this map, stay
 * bounded whatever callers send. A value past the cap is not kept by its own name either.
 */
export class BoundedSeries<Child> {
  private readonly children = new Map<string, Child>();
  private readonly labels: readonly LabelValues[];

  constructor(
    readonly metricName: string,
    labelNames: readonly string[],
    cap: number,
    private readonly make: (values: readonly string[]) => Child,
    onCapReached: (metric: string, label: string, cap: number) => void,
  ) {
    this.labels = labelNames.map((label) => new LabelValues(cap, () => onCapReached(metricName, label, cap)));
  }

  /** The series of these label values (in the metric's label order). */
  of(...values: string[]): Child {
    const key = values.join('\u0000');
    const known = this.children.get(key);
    if (known !== undefined) return known;
    let bounded = false;
    for (let index = 0; index < values.length; index++) {
      const value = (this.labels[index] as LabelValues).valueOf(values[index] as string);
      if (value !== values[index]) {
        values[index] = value;
        bounded = true;
      }
    }
    if (!bounded) {
      const child = this.make(values);
      this.children.set(key, child);
      return child;
    }
    const boundedKey = values.join('\u0000');
    let child = this.children.get(boundedKey);
    if (child === undefined) {
      child = this.make(values);
      this.children.set(boundedKey, child);
    }
    return child;
  }
}
