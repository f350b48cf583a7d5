import type { RequestFilters } from '../api/requests';

export const FILTER_KEYS = ['session_id', 'token_id', 'team', 'model', 'status', 'from', 'to'] as const satisfies readonly (keyof RequestFilters)[];

/** The filters of a requests URL: the query string is the state, so a view can be shared. */
export function readFilters(search: URLSearchParams): RequestFilters {
  const filters: RequestFilters = {};
  for (const key of FILTER_KEYS) {
    const value = search.get(key)?.trim();
    if (value !== undefined && value !== '') filters[key] = value;
  }
  return filters;
}

export function filtersToSearch(filters: RequestFilters): string {
  const params = new URLSearchParams();
  for (const key of FILTER_KEYS) {
    const value = filters[key];
    if (value !== undefined && value !== '') params.set(key, value);
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}
