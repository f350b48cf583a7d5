import type { AdminRoute } from '../admin-route.js';
import type { RequestQueries } from '../request-queries.js';
import {
  IdParamsSchema,
  RequestListQuerySchema,
  RequestListSchema,
  RequestViewSchema,
  SessionQuerySchema,
  SessionViewSchema,
  UsageQuerySchema,
  UsageViewSchema,
  type RequestListQuery,
  type SessionQuery,
  type UsageQueryParameters,
} from '../request-schemas.js';

/**
 * The request log through the admin API: requests (filtered, paged newest first), one request with
 * its attempts, a session's turns, and usage totals. The edge has checked `query` against the
 * schema before `handle` runs, which is what makes the casts below sound.
 */
export function requestRoutes(queries: RequestQueries): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/admin/v1/requests',
      operationId: 'listRequests',
      summary: 'Requests, newest first, by session, token, team, project, model, status and time; paged with a cursor',
      tag: 'requests',
      query: RequestListQuerySchema,
      response: RequestListSchema,
      handle: ({ query }) => queries.list(query as RequestListQuery),
    },
    {
      method: 'GET',
      path: '/admin/v1/requests/{id}',
      operationId: 'getRequest',
      summary: "One request in full with its upstream attempts, by the gateway's id or the caller's X-Request-Id",
      tag: 'requests',
      params: IdParamsSchema,
      response: RequestViewSchema,
      handle: ({ params }) => queries.get(params['id'] ?? ''),
    },
    {
      method: 'GET',
      path: '/admin/v1/sessions/{id}',
      operationId: 'getSession',
      summary: "A session's turns, oldest first: time, credential, affinity decision, usage, latency, status",
      tag: 'sessions',
      params: IdParamsSchema,
      query: SessionQuerySchema,
      response: SessionViewSchema,
      handle: ({ params, query }) => queries.session(params['id'] ?? '', query as SessionQuery),
    },
    {
      method: 'GET',
      path: '/admin/v1/usage',
      operationId: 'getUsage',
      summary: 'Requests, errors, tokens and cost per UTC hour or day, by token, team, project or model',
      tag: 'usage',
      query: UsageQuerySchema,
      response: UsageViewSchema,
      handle: ({ query }) => queries.usage(query as UsageQueryParameters),
    },
  ];
}
