import { invalidField } from './input-checks.js';

/** Admin lists answer at most this many records a page; more is refused, not cut. */
export const MAX_PAGE_SIZE = 1_000;
export const DEFAULT_PAGE_SIZE = 100;

/** What a caller asks of a list: a page size and the cursor a previous page answered with. */
export interface PageRequest {
  limit?: number;
  cursor?: string;
}

export interface Page<T> {
  data: T[];
  /** Where the next page starts; null on the last page. */
  nextCursor: string | null;
}

/** The page size asked for, checked: 1 to MAX_PAGE_SIZE. */
export function pageSize(request: PageRequest): number {
  const limit = request.limit ?? DEFAULT_PAGE_SIZE;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw invalidField(['query', 'limit'], `must be an integer from 1 to ${MAX_PAGE_SIZE}`, 'less_than_equal');
  }
  return limit;
}

/**
 * Cursors are opaque to callers: base64url of the JSON of where the last page ended (an id, or
 * a creation time and an id). `check` says whether the decoded value has the expected shape.
 */
export function encodeCursor(position: unknown): string {
  return Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
}

export function decodeCursor<T>(cursor: string | undefined, check: (value: unknown) => value is T): T | undefined {
  if (cursor === undefined) return undefined;
  let value: unknown;
  try {
    if (!/^[A-Za-z0-9_-]{1,800}$/.test(cursor)) throw new Error('not base64url');
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (!check(value)) throw invalidField(['query', 'cursor'], 'is not a cursor this list answered with', 'value_error');
  return value;
}

/** Asks the store for one more record than the page holds: its presence says whether a next page exists. */
export async function readPage<T>(limit: number, read: (limit: number) => Promise<T[]>, position: (last: T) => unknown): Promise<Page<T>> {
  const rows = await read(limit + 1);
  const data = rows.slice(0, limit);
  const last = data.at(-1);
  return { data, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(position(last)) : null };
}

/** Every record of a paged list (the CLI prints them all), page by page at the largest size. */
export async function allPages<T>(list: (request: PageRequest) => Promise<Page<T>>): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await list({ limit: MAX_PAGE_SIZE, ...(cursor === undefined ? {} : { cursor }) });
    all.push(...page.data);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return all;
}
