import { Type, type Static } from '@sinclair/typebox';
import { DURATION_PATTERN } from '../core/duration.js';
import { ModelConfigSchema } from './model-schema.js';

export {
  MODEL_TYPES,
  ModelConfigSchema,
  ROUTING_STRATEGIES,
  RouteConfigSchema,
  type ModelConfig,
  type ModelType,
  type RouteConfig,
  type RoutingStrategy,
} from './model-schema.js';

/** Provider kinds a config may name. Whether one is available is decided by the provider registry. */
export const PROVIDER_KINDS = ['openai', 'azure', 'anthropic', 'gemini', 'cohere', 'jina', 'tei', 'codex', 'local'] as const;

/*
 * Every key's `description` is its row in docs/configuration.md (npm run docs:configuration;
 * `docs/x.md` there becomes a link). `documentedDefault` words a default that is not one value
 * (the provider's, the start time) or that an adapter applies: an annotation, unread at load.
 */
const PositiveInteger = (defaultValue: number, description: string) => Type.Integer({ minimum: 1, default: defaultValue, description });

/** `forever`, or a duration as `Duration` takes them. */
const RETENTION_PATTERN = `^\\s*forever\\s*$|${DURATION_PATTERN}`;

/** A duration written as people write them: `250ms`, `90s`, `5m`, `1h`, `7d`. `hint` words the error. */
const Duration = (defaultValue: string, description: string) =>
  Type.String({ pattern: DURATION_PATTERN, default: defaultValue, description, hint: 'a duration such as 500ms, 90s, 5m or 1h' });

const UpstreamTimeouts = Type.Object(
  {
    connect_ms: PositiveInteger(
      10_000,
      'TCP connect and, for `https`, the TLS handshake; a failed connect fails the request that waited longest, which then fails over (docs/upstream-http.md)',
    ),
    first_byte_ms: PositiveInteger(
      120_000,
      'from the request written to a connection until the upstream sends response headers → 504 (waiting for a free connection is not counted, and each chunk of a streamed upload restarts it)',
    ),
    idle_ms: PositiveInteger(
      300_000,
      'longest silence between two body chunks (a stalled stream); time the gateway itself holds the body back for a slow client is not counted. Both are checked by one sweep per upstream every tenth of the shorter (5 ms – 1 s), so a timeout fires up to that much late',
    ),
    total_ms: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'longest a whole upstream call may take, a stream included (a call past it before the first byte fails over; a stream past it ends with an in-band error). It is checked while the upstream is being waited for, not while the gateway itself holds a stream back for a slow client',
      }),
    ),
  },
  { additionalProperties: false, default: {} },
);

/**
 * How an upstream is reached: the proxy, extra CAs, a client certificate, HTTP/2. Read by
 * config/resolve-network.ts at load (the proxy environment, the PEM files), so that nothing later
 * reads the environment or the disk.
 */
const UpstreamNetwork = Type.Object(
  {
    proxy: Type.String({
      default: 'env',
      pattern: '^(env|none|[hH][tT][tT][pP][sS]?://.+)$',
      description:
        "`env`: `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` (lower case first); `none`; or the proxy's URL, `http://[user:pass@]host:port` (or `https://`). https upstreams are tunnelled with CONNECT; a proxy that refuses is a `connect` failure and fails over (docs/upstream-http.md#the-network-block)",
    }),
    ca_file: Type.Optional(
      Type.String({ minLength: 1, description: "extra CA certificates (PEM) trusted for this upstream, beside the system's; relative to the config file" }),
    ),
    cert_file: Type.Optional(Type.String({ minLength: 1, description: 'client certificate (PEM) for mTLS; it needs `key_file`' })),
    key_file: Type.Optional(Type.String({ minLength: 1, description: "the client certificate's private key (PEM) for mTLS; it needs `cert_file`" })),
    http2: Type.Boolean({ default: false, description: '`true`: HTTP/2 when an https upstream offers it (ALPN), else HTTP/1.1' }),
  },
  { additionalProperties: false, default: {} },
);

/**
 * The keys every upstream entry may have. A provider's own keys (`engine_threads` for `local`,
 * `api_version` for `azure`…) are not listed here: each provider folder owns their schema and
 * checks an entry against it when the gateway starts, so a key of another provider is refused
 * there, naming the entry and the key (see providers/shared/upstream-keys.ts).
 */
export const UpstreamConfigSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, pattern: '^[A-Za-z0-9._-]+$', description: 'unique name, `[A-Za-z0-9._-]+`' }),
    provider: Type.Union(
      PROVIDER_KINDS.map((kind) => Type.Literal(kind)),
      { description: 'which endpoints each serves: docs/providers.md; `codex` is a ChatGPT subscription account (docs/native-passthrough.md)' },
    ),
    base_url: Type.Optional(
      Type.String({
        pattern: '^https?://',
        documentedDefault: "provider's",
        description:
          'for `openai`: `https://api.openai.com/v1`; any OpenAI-compatible server (vLLM, Ollama, llama.cpp, Groq, Together, OpenRouter…) is `openai` with its own `base_url`',
      }),
    ),
    api_key: Type.Optional(Type.String({ description: 'sent as `Authorization: Bearer …` (azure: `api-key`); omit for servers without auth' })),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: "extra headers sent with this credential's requests (e.g. `OpenAI-Organization`, OpenRouter's `HTTP-Referer`)",
      }),
    ),
    max_connections: PositiveInteger(
      1024,
      "connections open at once to this entry's endpoint, shared by the credentials on it (kept alive between requests: an idle one is closed after 30 s, or 1 s before the upstream's own `Keep-Alive: timeout`); a request past it waits for a free one. Every streaming response holds one for its whole length, so this is the upstream's concurrent-stream ceiling: the default matches the OpenAI SDKs' 1000",
    ),
    max_in_flight: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          "this credential's requests in flight at once (counted across gateway processes sharing `state.url`); past it a request goes to another credential of the pool, or waits up to `routing.queue_timeout` (docs/routing.md)",
      }),
    ),
    max_response_bytes: PositiveInteger(
      128 * 1024 * 1024,
      'largest answer read whole (non-streamed chat, embeddings…); past it the call fails as 502 `upstream_invalid_response` and fails over. Of an error answer only the first 64 KiB are read',
    ),
    max_event_bytes: PositiveInteger(16 * 1024 * 1024, 'largest single event of an upstream stream; past it the stream fails as `upstream_invalid_response`'),
    timeouts: UpstreamTimeouts,
    network: UpstreamNetwork,
  },
  { additionalProperties: true },
);

/** The keys of UpstreamConfigSchema: whatever else an entry has must be its provider's own. */
export const COMMON_UPSTREAM_KEYS: ReadonlySet<string> = new Set(Object.keys(UpstreamConfigSchema.properties));

export const ConfigSchema = Type.Object(
  {
    server: Type.Object(
      {
        host: Type.String({ minLength: 1, default: '127.0.0.1', description: 'listen address (`SWITCHYARD_HOST`)' }),
        port: Type.Integer({ minimum: 0, maximum: 65_535, default: 8080, description: 'listen port, 0 for any free port (`SWITCHYARD_PORT`)' }),
        workers: Type.Union([Type.Integer({ minimum: 1, maximum: 256 }), Type.Literal('auto')], {
          default: 1,
          description:
            'processes serving the port on this host (`switchyard serve --workers N`): one primary starts them, restarts one that dies and drains them all on SIGTERM; `auto`: one per core the process may use. More than 1 needs `state.url` on Redis (docs/workers.md)',
        }),
        body_limit_bytes: PositiveInteger(16 * 1024 * 1024, 'largest JSON body; larger → 413'),
        drain_delay_ms: Type.Integer({
          minimum: 0,
          maximum: 300_000,
          default: 0,
          description:
            'after SIGTERM, how long the gateway keeps serving while `/ready` answers 503 and every answer closes its connection, so that a load balancer moves away before the listener closes; behind a load balancer that probes `/ready`, at least its probe interval times its failure threshold (docs/deploy.md#rolling-restarts)',
        }),
        shutdown_timeout_ms: PositiveInteger(
          30_000,
          'how long in-flight requests and streams may run once the listener has closed (after `drain_delay_ms`); then requests still waiting for their upstream get 503 `shutting_down` and streams are cut',
        ),
        pid_file: Type.Optional(
          Type.String({
            minLength: 1,
            description:
              'a file the gateway writes its process id to once it listens, and removes when it stops; relative to the config file; its folder must exist (with systemd, `RuntimeDirectory=switchyard` makes `/run/switchyard`), else the gateway stops again with exit 78. What `logrotate` and `switchyard reload` signal (docs/operations.md#logs)',
          }),
        ),
        body_timeout_ms: PositiveInteger(
          30_000,
          "longest silence while a request body arrives (not the upload's whole duration); then 408 `request_timeout` and the connection is closed (docs/reliability.md)",
        ),
        max_connections: PositiveInteger(
          10_000,
          'client connections open at once; at it a new connection makes room by closing an idle one (one that has not sent a whole request head, else a kept-alive one with no request in flight), or is closed itself when every open one is serving (docs/connections.md)',
        ),
        max_connections_per_client: Type.Integer({
          minimum: 0,
          default: 2_000,
          description:
            'client connections one address may hold at once (an IPv4-mapped IPv6 address counts as its IPv4 address); past it new connections from that address are closed as they arrive. 0: no share. A proxy listed in `server.trusted_proxies` has no share (every client behind it has its address); the total still holds (docs/connections.md)',
        }),
        trusted_proxies: Type.Array(Type.String({ minLength: 1 }), {
          default: [],
          description:
            "reverse proxies whose `X-Forwarded-Host`, `X-Forwarded-Proto` and `X-Forwarded-For` the gateway believes, for the console's origin check, its cookie's `Secure` flag and the client address in the logs: addresses, CIDR ranges (IPv4, IPv6) and the shortcuts `loopback` and `private`. Empty: no forwarded header is believed. nginx and Caddy configurations: docs/reverse-proxy.md",
        }),
        header_timeout_ms: PositiveInteger(
          10_000,
          'longest a connection may take to send a whole request head, from its connection (or from the first byte of a later request on a kept-alive one); then 408 `request_timeout` and the connection is closed fully, without waiting for the client to read or close',
        ),
        paused_stream_timeout_ms: PositiveInteger(
          60_000,
          "longest a streamed response (chat, speech) waits for a client that stopped reading; then it is ended and logged. One token may also keep at most half of an endpoint's `max_connections` waiting at once",
        ),
        cors: Type.Object(
          {
            allowed_origins: Type.Array(Type.String({ minLength: 1 }), {
              default: [],
              description:
                'browser origins allowed to call the API: exact origins (`https://app.example.com`) or `*` for any. A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) from one is answered 204 with the allowed methods and headers (`authorization`, `content-type`, `x-session-id`, `x-request-id`); its responses carry `Access-Control-Allow-Origin` and expose `x-request-id`, `x-session-*`, `x-ratelimit-*` and `retry-after`. A preflight from any other origin gets no allow headers. Empty: no CORS headers at all',
            }),
          },
          { additionalProperties: false, default: {} },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    database: Type.Object(
      {
        url: Type.String({
          pattern: '^(sqlite:|postgres://|postgresql://)',
          default: 'sqlite:./data/switchyard.db',
          description:
            '`sqlite:PATH`, `sqlite::memory:` or `postgres://…` (`SWITCHYARD_DATABASE_URL`); a PostgreSQL schema can be chosen with `?options=-c%20search_path%3Dname`',
        }),
        sqlite_checkpoint_pages: Type.Integer({
          minimum: 10,
          default: 300,
          description:
            "SQLite: the write-ahead log is checkpointed (copied into the database file) inside the commit that makes it this many pages long, on the event loop; fewer pages make each pause shorter and more frequent. SQLite's own default, 1000, paused requests 5–9 ms at a time. See docs/request-log.md",
        }),
        statement_timeout_ms: PositiveInteger(
          10_000,
          "PostgreSQL: a statement that runs this long is cancelled by the server (`statement_timeout`), and one whose answer does not come in this long plus a second (a server that hangs) fails on the gateway's side (`query_timeout`); the admin API then answers 503 `database_unavailable`. Migrations at start run without it",
        ),
        connect_timeout_ms: PositiveInteger(
          5_000,
          "PostgreSQL: longest a new connection may take to open, or a query wait for one of the pool's 10 connections",
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    state: Type.Object(
      {
        url: Type.String({
          pattern: '^(memory$|redis://|rediss://)',
          default: 'memory',
          description:
            '`memory` (this process only) or `redis://…` / `rediss://…` (`SWITCHYARD_STATE_URL`): where credential states, session bindings and in-flight counts are shared by every gateway process (docs/routing.md, docs/state.md). A Redis that cannot be reached at start stops the gateway, naming the URL without its password',
        }),
        key_prefix: Type.String({
          pattern: '^[A-Za-z0-9._:-]{1,64}$',
          default: 'switchyard:',
          description: 'Redis: what every key and channel begins with, so that several deployments can share one Redis',
        }),
        slot_lease: Duration(
          '30s',
          "a `max_concurrent` slot is a lease this long, renewed every third of it while its request lives: a slot is free at most this long after its request ended, and a crashed process's slots within it; at least `3s` (a renewal must not be later than the lease it renews) (docs/limits.md#slots-short-leases-a-heartbeat-settlements-retried)",
        ),
        request_timeout_ms: PositiveInteger(
          150,
          'Redis: how long a request waits for one state operation (its admission, its session binding, a stored response) before it goes on as when the state is down; five failures in a row declare the state down until it answers again (docs/state.md)',
        ),
        lock_lease_ms: PositiveInteger(
          60_000,
          "how long a lock shared through the state (a ChatGPT account's refresh) outlives a holder that stopped renewing it; a live holder renews it every quarter of it (docs/state.md)",
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    routing: Type.Object(
      {
        max_attempts: PositiveInteger(3, 'credentials tried for one request before its failure is returned (docs/routing.md)'),
        max_cooldown: Duration(
          '5m',
          "the longest cooldown of a credential (backoff steps and the upstream's own `Retry-After` are capped by it; a spent quota cools for exactly this long, unless the upstream said when it resets: a ChatGPT account's usage limit cools until its `resets_at`)",
        ),
        queue_timeout: Duration('5s', 'how long a request waits when every available credential is at its `max_in_flight`; then 503 `no_upstream_available`'),
        session_ttl: Duration('1h', 'how long a session stays bound to its credential after its last request (sliding)'),
        infer_sessions: Type.Boolean({
          default: true,
          description:
            'a chat request without a session id gets one inferred from its conversation (team, model, first system/developer message, first user message)',
        }),
        max_sessions_per_team: PositiveInteger(
          10_000,
          "session bindings one team holds at once; past it the team's earliest bound sessions lose their binding (docs/routing.md)",
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    responses: Type.Object(
      {
        retention: Duration(
          '24h',
          'how long a response `/v1/responses` made by conversion is kept (in the shared state, `state.url`) for `previous_response_id` and `item_reference`, from when it was made (docs/responses-api.md)',
        ),
        max_bytes: PositiveInteger(
          256 * 1024 * 1024,
          "bytes all teams' stored responses may take together, in memory or in Redis; past it the oldest of any team are evicted",
        ),
        max_bytes_per_team: PositiveInteger(
          32 * 1024 * 1024,
          "bytes one team's stored responses (and their items) may take; past it the team's oldest are evicted (docs/responses-api.md)",
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    security: Type.Object(
      {
        secret_key: Type.Optional(
          Type.String({
            minLength: 1,
            description:
              '`SWITCHYARD_SECRET_KEY`: 32 bytes as 64 hex digits or base64 (`openssl rand -hex 32`); seals the tokens of accounts added at run time (AES-256-GCM). Without it such accounts cannot be added or served (docs/native-passthrough.md)',
          }),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    console: Type.Object(
      {
        enabled: Type.Boolean({ default: true, description: 'serve the web console at `/console` and its sign-in routes (docs/console.md)' }),
        idle_timeout: Duration('12h', 'a console sign-in ends after this long without a call'),
        max_age: Duration('7d', 'a console sign-in ends this long after it began, used or not'),
        origins: Type.Array(Type.String({ pattern: '^https?://[^/]+$' }), {
          default: [],
          description:
            'origins the console is also reached at (`https://gateway.example.com` behind a proxy that rewrites `Host` and is not in `server.trusted_proxies`), for the CSRF origin check (docs/reverse-proxy.md)',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    auth: Type.Object(
      {
        token_prefix: Type.String({
          pattern: '^[a-z][a-z0-9]{1,15}_$',
          default: 'svc_',
          description: 'prefix of new tokens: lower-case letters/digits then `_`',
        }),
        change_poll_ms: PositiveInteger(2_000, 'PostgreSQL only: safety-net poll for token changes besides LISTEN/NOTIFY'),
      },
      { additionalProperties: false, default: {} },
    ),
    logging: Type.Object(
      {
        level: Type.Union(
          ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
          { default: 'info', description: 'pino level, `silent` to turn logs off; applied again by a reload' },
        ),
        file: Type.Optional(
          Type.String({
            minLength: 1,
            documentedDefault: 'none (stdout)',
            description:
              'write the log lines to this file instead of stdout (appended; its folder made if missing; relative to the config file), reopened by its path on `SIGUSR2` or `SIGHUP` so that `logrotate` can move it (docs/operations.md#logs). The banner stays on stderr',
          }),
        ),
        access: Type.Boolean({
          default: true,
          description:
            'one `info` line (stdout, or `logging.file`) per `/v1` request when it ends: request id, client address (`client`: behind a trusted proxy, the `X-Forwarded-For` client, docs/reverse-proxy.md), method, path, status, error code, model, token id and team (never the secret), session, credential, latency, first-byte time, tokens (docs/request-log.md); upstream failures are logged at `warn` either way',
        }),
        failure_interval_ms: PositiveInteger(
          10_000,
          'a failure that repeats (request-log writes, the token watcher, accounts, the shared state, PostgreSQL connections) is logged once this often per kind, the first line of an outage with its stack, the next ones with how many were left out (`suppressed`); one `info` line when it works again',
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    metrics: Type.Object(
      {
        enabled: Type.Boolean({
          default: true,
          description:
            'Prometheus metrics: `GET /metrics` on the main port for a token with the `metrics` scope, and on `metrics.listen` when set. `false` removes both and every cost of them (docs/metrics.md)',
        }),
        listen: Type.Optional(
          Type.String({
            pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[^\\s:\\[\\]]+):[0-9]{1,5}$',
            hint: 'host:port, such as 127.0.0.1:9464',
            description:
              'a second listener, `host:port` (`127.0.0.1:9464`), serving `GET /metrics` without authentication for in-cluster scraping; bind it where only the monitoring system reaches it. Unset: none',
          }),
        ),
        labels: Type.Object(
          {
            team: Type.Boolean({ default: true, description: "label request, token and cost metrics with the caller's team; `false` drops the label" }),
          },
          { additionalProperties: false, default: {} },
        ),
        max_label_values: PositiveInteger(
          500,
          'distinct values one label may take in one metric; past it new values are counted under `other`, and one warning names the metric and the label',
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    tracing: Type.Object(
      {
        otlp_endpoint: Type.Optional(
          Type.String({
            pattern: '^https?://[^\\s]+$',
            description:
              "turns OpenTelemetry tracing on: the OTLP/HTTP collector's base URL (`http://collector:4318`); spans go to its `/v1/traces`. Else `OTEL_EXPORTER_OTLP_ENDPOINT`. Unset (and no `otlp_traces_endpoint`): tracing is off and costs nothing (docs/tracing.md)",
          }),
        ),
        otlp_traces_endpoint: Type.Optional(
          Type.String({
            pattern: '^https?://[^\\s]+$',
            description: 'the whole URL spans are posted to, instead of `otlp_endpoint` + `/v1/traces`. Else `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`',
          }),
        ),
        service_name: Type.String({ minLength: 1, default: 'switchyard', description: "the spans' `service.name`. Else `OTEL_SERVICE_NAME`" }),
        sample_ratio: Type.Number({
          minimum: 0,
          maximum: 1,
          default: 1,
          description:
            'the share of new traces recorded; a request whose caller sent a sampled `traceparent` is recorded whatever this says. Else `OTEL_TRACES_SAMPLER_ARG`',
        }),
        max_queue_spans: PositiveInteger(
          2_048,
          'spans held for export while the collector is slow or away; past it new spans are dropped and counted (`switchyard_spans_dropped_total`)',
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    request_log: Type.Object(
      {
        batch_size: PositiveInteger(100, 'rows per insert; requests run between batches, so a SQLite flush never blocks for more than one batch (~0.5 ms)'),
        flush_interval_ms: PositiveInteger(
          200,
          'longest a row waits before it is written: the rows a crash (`kill -9`) of the process loses are those of the requests that ended in the last interval (docs/limits.md#what-a-crash-loses)',
        ),
        max_queue: PositiveInteger(100_000, 'rows kept in memory while the database refuses writes; the oldest are dropped past it'),
        retention: Type.String({
          pattern: RETENTION_PATTERN,
          default: '90d',
          hint: 'a duration of at least 1h, such as 30d, 12w or 2160h, or forever',
          description:
            'how long request log rows are kept, by when their request started (`7d`, `12w`; at least `1h`), or `forever`. Older rows are removed off the request path by the gateway (a pass a minute after start, then hourly) or `switchyard requests prune`; on PostgreSQL by whole days (a row lives between the retention and a day more). The hourly usage rollup that quotas and the usage charts read is kept (docs/request-log-retention.md)',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    defaults: Type.Object(
      {
        transcription_model: Type.Optional(
          Type.String({
            minLength: 1,
            documentedDefault: 'first transcription model',
            description: 'used when a transcription request names no model; must be a configured transcription model',
          }),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    upstreams: Type.Array(UpstreamConfigSchema, {
      default: [],
      documentedDefault: '`[]` in a file; `[{ id: local, provider: local }]` with no file',
      description: 'one entry per credential, below',
    }),
    models: Type.Array(ModelConfigSchema, { default: [], description: 'one entry per public model, below' }),
  },
  { additionalProperties: false },
);

export type SwitchyardConfig = Omit<Static<typeof ConfigSchema>, 'upstreams'> & { upstreams: UpstreamConfig[] };
/** An entry as loaded: its `network` resolved (config/resolve-network.ts). */
export type UpstreamConfig = Omit<Static<typeof UpstreamConfigSchema>, 'network'> & { network: ResolvedNetwork };
/** The `network` block as written in the file. */
export type NetworkConfig = Static<typeof UpstreamNetwork>;

/** Where an upstream's connections go first: straight to it (null), or through a proxy. */
export interface ProxyRoute {
  /** The proxy for http:// upstreams, for https:// ones; null: none for that scheme. */
  readonly http: string | null;
  readonly https: string | null;
  /** Hosts reached directly (the NO_PROXY syntax: `host`, `.domain`, `host:port`, `*`). */
  readonly noProxy: string;
}

/** The `network` block with the environment and the files it names already read. */
export interface ResolvedNetwork {
  readonly proxy: ProxyRoute | null;
  /** PEM text. */
  readonly ca: string | null;
  readonly cert: string | null;
  readonly key: string | null;
  readonly http2: boolean;
}
export type ProviderKind = (typeof PROVIDER_KINDS)[number];
export type RoutingConfig = Static<typeof ConfigSchema>['routing'];
