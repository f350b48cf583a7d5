import type { TObject, TSchema } from '@sinclair/typebox';

/** What a handler is given: every part already validated against the route's schemas. */
export interface AdminInput {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

/**
 * One admin API route, described once: the edge registers it (scope `admin`, validation of
 * params, query and body by these schemas, errors as /v1 answers them) and the OpenAPI document
 * is generated from the same table, so the document cannot drift from what is enforced.
 */
export interface AdminRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** OpenAPI style: `/admin/v1/teams/{id}`. */
  path: string;
  /** OpenAPI operationId: camelCase, unique. */
  operationId: string;
  summary: string;
  /** Groups routes in the document: `teams`, `projects`, `tokens`, `credentials`, `requests`, `sessions`, `usage`. */
  tag: string;
  params?: TObject;
  query?: TObject;
  body?: TSchema;
  /** The success answer's schema. */
  response: TSchema;
  /** The success status; 200 unless given (201 for creations). */
  status?: number;
  handle(input: AdminInput): Promise<unknown> | unknown;
}
