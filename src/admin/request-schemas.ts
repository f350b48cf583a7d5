import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { MAX_PAGE_SIZE } from '../access/list-page.js';

/**
 * The wire format of the admin API's request, session and usage routes: the schemas the edge
 * validates with and the OpenAPI document shows. Times are ISO 8601 in UTC on the way out; on the
 * way in, a date (`2025-06-01`, midnight UTC) or a date and time with `Z` or an offset: a time
 * without a zone would mean the server's, which no caller can know.
 */
export const TIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9})?)?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d))?$';
/** `429`, or a class such as `5xx`. */
export const STATUS_PATTERN = '^([1-5]\\d\\d|[1-5][xX][xX])$';
export const DEFAULT_PAGE_SIZE = 50;
export const DEFAULT_TURNS = 100;

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const time = (description: string) => Type.Optional(Type.String({ pattern: TIME_PATTERN, description }));
const filterText = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 256, description }));
const cursor = Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'The `next_cursor` of the previous page, unchanged.' }));
const limit = (fallback: number) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: fallback, description: `Page size, ${fallback} unless given.` }));

export const RequestListQuerySchema = Type.Object(
  {
    session_id: filterText('Requests of this session.'),
    token_id: filterText('Requests made with this token (`tok_…`).'),
    team: filterText('Requests of this team.'),
    project: filterText('Requests of this project (project ids are unique within a team: add `team`).'),
    model: filterText('Requests served with this model (its public id).'),
    status: Type.Optional(Type.String({ pattern: STATUS_PATTERN, description: 'An HTTP status (`429`) or a class (`5xx`).' })),
    from: time('Requests that started at or after this time.'),
    to: time('Requests that started before this time.'),
    cursor,
    limit: limit(DEFAULT_PAGE_SIZE),
  },
  { additionalProperties: false },
);
export type RequestListQuery = Static<typeof RequestListQuerySchema>;

export const IdParamsSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 256 }) });

export const SessionQuerySchema = Type.Object({ cursor, limit: limit(DEFAULT_TURNS) }, { additionalProperties: false });
export type SessionQuery = Static<typeof SessionQuerySchema>;

export const UsageQuerySchema = Type.Object(
  {
    from: time('Start of the range (inclusive). Default: 23 buckets before the current one.'),
    to: time('End of the range (exclusive). Default: now.'),
    bucket: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day')], { default: 'day', description: 'UTC hours or UTC days.' })),
    group_by: Type.Optional(
      Type.Union([Type.Literal('token'), Type.Literal('team'), Type.Literal('project'), Type.Literal('model')], {
        default: 'team',
        description: 'What each row totals.',
      }),
    ),
    token_id: filterText('Only requests made with this token.'),
    team: filterText('Only requests of this team.'),
    project: filterText('Only requests of this project.'),
    model: filterText('Only requests served with this model.'),
  },
  { additionalProperties: false },
);
export type UsageQueryParameters = Static<typeof UsageQuerySchema>;

export const AttemptSchema = Type.Object({
  credential: Type.String({ description: 'The upstream credential tried (`upstreams[].id`).' }),
  outcome: Type.String({ description: '`ok`, or the error code the attempt ended with.' }),
  status: nullable(Type.Integer({ description: "The upstream's HTTP status, when it answered." })),
  ms: Type.Number(),
});

export const RequestViewSchema = Type.Object({
  object: Type.Literal('request'),
  id: Type.String({ description: "The gateway's request id (`X-Request-Id` of the response)." }),
  client_request_id: nullable(Type.String({ description: 'The `X-Request-Id` the caller sent, when it sent one.' })),
  created_at: Type.String({ description: 'When the request started (ISO 8601, UTC).' }),
  logged_at: nullable(Type.String({ description: 'When its log row was written.' })),
  endpoint: Type.String({ description: '`chat.completions`, `embeddings`, `native.responses`, …' }),
  model: nullable(Type.String({ description: 'The public model id the caller asked for (and was answered with).' })),
  upstream_model: nullable(Type.String({ description: "The model's name at the upstream (a deployment, a snapshot): what the gateway sent it." })),
  token_id: nullable(Type.String()),
  team: nullable(Type.String()),
  project: nullable(Type.String()),
  client_address: nullable(
    Type.String({
      description:
        "The client's address: the connection's, or behind a trusted proxy the X-Forwarded-For client's (docs/reverse-proxy.md); null in rows older than the column.",
    }),
  ),
  worker: nullable(
    Type.Integer({ description: 'The worker of `serve --workers` that served it (docs/workers.md); null when the gateway runs as one process.' }),
  ),
  session_id: nullable(Type.String()),
  session_source: nullable(Type.String({ description: '`header`, `metadata.session_id`, `metadata.sticky_key`, `native` or `inferred`.' })),
  affinity: nullable(Type.String({ description: "What became of the session's binding: `new`, `kept`, `moved`, `overflow`." })),
  upstream: nullable(Type.String({ description: 'The credential that answered, or the last one tried.' })),
  status: Type.Integer(),
  error_code: nullable(Type.String()),
  latency_ms: Type.Number(),
  ttfb_ms: nullable(Type.Number({ description: 'Until the client got the first byte.' })),
  prompt_tokens: nullable(Type.Integer()),
  cached_tokens: nullable(Type.Integer({ description: "Of the prompt tokens, those read from the upstream's cache." })),
  cache_write_tokens: nullable(
    Type.Integer({ description: "Of the prompt tokens, those written to the upstream's cache (Anthropic's cache writes); null when it did not say." }),
  ),
  completion_tokens: nullable(Type.Integer()),
  reasoning_tokens: nullable(Type.Integer()),
  usage_source: nullable(Type.String({ description: '`upstream`, `estimated` or `none`.' })),
  cost_usd: nullable(Type.Number({ description: "By the model's configured price; null without one." })),
  attempts: Type.Array(AttemptSchema, { description: 'Every upstream attempt, in order; empty when none was made.' }),
});
export type RequestView = Static<typeof RequestViewSchema>;

export const RequestListSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(RequestViewSchema),
  next_cursor: nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page.' })),
});
export type RequestList = Static<typeof RequestListSchema>;

export const SessionViewSchema = Type.Object({
  object: Type.Literal('session'),
  id: Type.String(),
  turns: Type.Array(RequestViewSchema, { description: "The session's requests, oldest first." }),
  next_cursor: nullable(Type.String()),
});
export type SessionView = Static<typeof SessionViewSchema>;

export const UsageRowSchema = Type.Object({
  start: Type.String({ description: "The bucket's start (ISO 8601, UTC)." }),
  token_id: Type.Optional(nullable(Type.String())),
  team: Type.Optional(nullable(Type.String())),
  project: Type.Optional(nullable(Type.String())),
  model: Type.Optional(nullable(Type.String())),
  requests: Type.Integer(),
  errors: Type.Integer({ description: 'Requests answered with a status of 400 or more.' }),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  cached_tokens: Type.Integer(),
  cost_usd: nullable(Type.Number({ description: 'Null when no request of the row had a price.' })),
});
export type UsageRowView = Static<typeof UsageRowSchema>;

export const UsageViewSchema = Type.Object({
  object: Type.Literal('usage'),
  bucket: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
  group_by: Type.Union([Type.Literal('token'), Type.Literal('team'), Type.Literal('project'), Type.Literal('model')]),
  from: Type.String(),
  to: Type.String(),
  data: Type.Array(UsageRowSchema, { description: 'One row per bucket and group that had requests, by bucket then group.' }),
});
export type UsageView = Static<typeof UsageViewSchema>;
