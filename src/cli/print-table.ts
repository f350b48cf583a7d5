import type { CliIo } from './cli-io.js';

/** Columns padded to their widest cell, two spaces apart, as `ps` and `kubectl get` print them. */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[], io: CliIo): void {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const format = (row: readonly string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  io.stdout(format(header));
  for (const row of rows) io.stdout(format(row));
}
