import type { ReactNode } from 'react';

/** A column of a data table: its header text, right-aligned when numeric, read by screen readers only when hidden. */
export interface Column {
  label: string;
  numeric?: boolean;
  title?: string;
  hidden?: boolean;
}

/** The console's table: a scrolling wrapper, a header row made from the columns, and the body's rows as children. */
export function DataTable({ columns, children }: { columns: readonly Column[]; children: ReactNode }) {
  return (
    <div className="table-wrap">
      <table className="data-table">
        <thead>
          <tr>
            {columns.map(({ label, numeric, title, hidden }) => (
              <th key={label} scope="col" className={numeric === true ? 'num' : undefined} title={title}>
                {hidden === true ? <span className="visually-hidden">{label}</span> : label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
