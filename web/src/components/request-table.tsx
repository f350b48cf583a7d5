import type { RequestView } from '../api/types';
import { DataTable, type Column } from './data-table';
import { RequestRow } from './request-row';

const COLUMNS: readonly Column[] = [
  { label: 'Time' },
  { label: 'Status' },
  { label: 'Model' },
  { label: 'Endpoint' },
  { label: 'Session' },
  { label: 'Token / team' },
  { label: 'Upstream' },
  { label: 'Latency', numeric: true },
  { label: 'Tokens (p / c / o)', numeric: true, title: 'prompt / cached / completion' },
  { label: 'Error' },
];

export function RequestTable({ rows }: { rows: readonly RequestView[] }) {
  return (
    <DataTable columns={COLUMNS}>
      {rows.map((row) => (
        <RequestRow key={row.id} row={row} />
      ))}
    </DataTable>
  );
}
