import type { ReactNode } from 'react';

/** Label/value pairs of a detail section. */
export function DefinitionList({ items }: { items: ReadonlyArray<readonly [string, ReactNode]> }) {
  return (
    <dl className="details">
      {items.map(([label, value]) => (
        <div key={label} className="details-item">
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
