import { apiCall } from './http';
import type { ListPage, RequestView, SessionView, UsageBucket, UsageGroupBy, UsageView } from './types';

export interface RequestFilters {
  session_id?: string;
  token_id?: string;
  team?: string;
  model?: string;
  status?: string;
  from?: string;
  to?: string;
}

export const PAGE_SIZE = 50;

export function listRequests(filters: RequestFilters, cursor: string | null, signal?: AbortSignal): Promise<ListPage<RequestView>> {
  return apiCall('GET', '/admin/v1/requests', { query: { ...filters, cursor, limit: PAGE_SIZE }, ...(signal === undefined ? {} : { signal }) });
}

export function getRequest(id: string, signal?: AbortSignal): Promise<RequestView> {
  return apiCall('GET', `/admin/v1/requests/${encodeURIComponent(id)}`, signal === undefined ? {} : { signal });
}

export function getSession(id: string, cursor: string | null, signal?: AbortSignal): Promise<SessionView> {
  return apiCall('GET', `/admin/v1/sessions/${encodeURIComponent(id)}`, { query: { cursor, limit: 100 }, ...(signal === undefined ? {} : { signal }) });
}

export interface UsageQuery {
  from: string;
  bucket: UsageBucket;
  group_by: UsageGroupBy;
}

export function getUsage(query: UsageQuery, signal?: AbortSignal): Promise<UsageView> {
  return apiCall('GET', '/admin/v1/usage', { query: { ...query }, ...(signal === undefined ? {} : { signal }) });
}
