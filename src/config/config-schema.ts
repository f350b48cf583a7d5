import { Type, type Static } from '@sinclair/typebox';
import { DURATION_PATTERN } from '../core/duration.js';

/** Provider kinds a config may name. Whether one is available is decided by the provider registry. */
export const PROVIDER_KINDS = ['openai', 'azure', 'anthropic', 'gemini', 'cohere', 'jina', 'tei', 'codex', 'local'] as const;
export const MODEL_TYPES = ['chat', 'embedding', 'rerank', 'transcription', 'speech'] as const;
/** How a model's pool chooses a credential (docs/routing.md). */
export const ROUTING_STRATEGIES = ['weighted', 'least-busy', 'ordered'] as const;

const PositiveInteger = (defaultValue: number, description: string) =>
  Type.Integer({ minimum: 1, default: defaultValue, description });

/** A duration written as people write them: `250ms`, `90s`, `5m`, `1h`, `7d`. `hint` words the error. */
const Duration = (defaultValue: string, description: string) =>
  Type.String({ pattern: DURATION_PATTERN, default: defaultValue, description, hint: 'a duration such as 500ms, 90s, 5m or 1h' });

const UpstreamTimeouts = Type.Object(
  {
    connect_ms: PositiveInteger(10_000, 'TCP/TLS connect timeout'),
    first_byte_ms: PositiveInteger(120_000, 'time allowed until the upstream sends response headers'),
    idle_ms: PositiveInteger(300_000, 'longest silence allowed between two body chunks'),
    total_ms: Type.Optional(Type.Integer({ minimum: 1, description: 'longest a whole upstream call may take, stream included; none by default' })),
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
      description: 'env (HTTPS_PROXY / HTTP_PROXY / NO_PROXY), none, or the proxy URL (http:// or https://)',
    }),
    ca_file: Type.Optional(Type.String({ minLength: 1, description: 'extra CA certificates (PEM) trusted for this upstream, beside the system ones' })),
    cert_file: Type.Optional(Type.String({ minLength: 1, description: 'client certificate (PEM) for mTLS, with key_file' })),
    key_file: Type.Optional(Type.String({ minLength: 1, description: "the client certificate's private key (PEM)" })),
    http2: Type.Boolean({ default: false, description: 'HTTP/2 when an https upstream offers it (ALPN)' }),
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
    id: Type.String({ minLength: 1, pattern: '^[A-Za-z0-9._-]+$' }),
    provider: Type.Union(PROVIDER_KINDS.map((kind) => Type.Literal(kind))),
    base_url: Type.Optional(Type.String({ pattern: '^https?://' })),
    api_key: Type.Optional(Type.String()),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    max_connections: PositiveInteger(1024, 'connections open at once to this upstream; requests past it wait for one'),
    max_in_flight: Type.Optional(Type.Integer({ minimum: 1, description: "this credential's requests in flight at once; past it a request goes to another credential or waits (routing.queue_timeout)" })),
    max_response_bytes: PositiveInteger(128 * 1024 * 1024, 'largest upstream answer read whole (non-streamed answers); past it the call fails as upstream_invalid_response'),
    max_event_bytes: PositiveInteger(16 * 1024 * 1024, 'largest single event of an upstream stream; past it the stream fails as upstream_invalid_response'),
    timeouts: UpstreamTimeouts,
    network: UpstreamNetwork,
  },
  { additionalProperties: true },
);

/** The keys of UpstreamConfigSchema: whatever else an entry has must be its provider's own. */
export const COMMON_UPSTREAM_KEYS: ReadonlySet<string> = new Set(Object.keys(UpstreamConfigSchema.properties));

export const RouteConfigSchema = Type.Object(
  {
    upstream: Type.Optional(Type.String({ minLength: 1 })),
    accounts: Type.Optional(
      Type.Literal('codex', { description: 'instead of upstream: every account of this provider added at run time (`switchyard credentials add-codex`, POST /admin/v1/credentials)' }),
    ),
    model: Type.String({ minLength: 1 }),
    weight: Type.Number({ exclusiveMinimum: 0, default: 1 }),
    priority: Type.Integer({ default: 0, description: '`ordered` strategy: lower is tried first' }),
  },
  { additionalProperties: false },
);

export const ModelConfigSchema = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    type: Type.Union(MODEL_TYPES.map((type) => Type.Literal(type))),
    owned_by: Type.Optional(Type.String({ minLength: 1 })),
    created: Type.Optional(Type.Integer({ minimum: 0, description: 'unix seconds shown in /v1/models' })),
    default_voice: Type.Optional(Type.String({ minLength: 1, description: 'speech models: the voice used when a request names none' })),
    strategy: Type.Union(
      ROUTING_STRATEGIES.map((strategy) => Type.Literal(strategy)),
      { default: 'weighted', description: 'how a credential of the pool is chosen' },
    ),
    routes: Type.Array(RouteConfigSchema, { minItems: 1 }),
    price: Type.Optional(
      Type.Object(
        {
          input_per_mtok: Type.Number({ minimum: 0, description: 'US dollars per million prompt tokens' }),
          output_per_mtok: Type.Number({ minimum: 0, description: 'US dollars per million completion tokens' }),
          cached_input_per_mtok: Type.Optional(Type.Number({ minimum: 0, description: 'per million prompt tokens read from the cache (default: input_per_mtok)' })),
        },
        { additionalProperties: false, description: 'what a request costs, for dollar quotas and the usage API' },
      ),
    ),
  },
  { additionalProperties: false },
);

export const ConfigSchema = Type.Object(
  {
    server: Type.Object(
      {
        host: Type.String({ minLength: 1, default: '127.0.0.1' }),
        port: Type.Integer({ minimum: 0, maximum: 65_535, default: 8080 }),
        body_limit_bytes: PositiveInteger(16 * 1024 * 1024, 'largest JSON body accepted'),
        shutdown_timeout_ms: PositiveInteger(30_000, 'how long in-flight requests may run after SIGTERM'),
        pid_file: Type.Optional(Type.String({ minLength: 1, description: "written with the gateway's process id while it serves (for logrotate and `switchyard reload`); relative to the config file" })),
        body_timeout_ms: PositiveInteger(30_000, 'longest silence while a request body arrives; then 408 and the connection is closed'),
        max_connections: PositiveInteger(10_000, 'client connections open at once; at it an idle one is closed to make room, or else the new one is closed'),
        max_connections_per_client: Type.Integer({
          minimum: 0,
          default: 2_000,
          description: 'client connections one address may hold at once; past it new ones are closed as they arrive. 0: no share. Trusted proxies have none',
        }),
        trusted_proxies: Type.Array(Type.String({ minLength: 1 }), {
          default: [],
          description: 'reverse proxies whose X-Forwarded-For/-Host/-Proto are believed: addresses, CIDR ranges, loopback, private (docs/reverse-proxy.md)',
        }),
        header_timeout_ms: PositiveInteger(10_000, 'longest a connection may take to send a whole request head; then 408 and the connection is closed'),
        paused_stream_timeout_ms: PositiveInteger(60_000, 'longest a streamed response may wait for a client that stopped reading; then it is ended'),
        cors: Type.Object(
          { allowed_origins: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'browser origins allowed to call the API (exact, or * for any)' }) },
          { additionalProperties: false, default: {} },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    database: Type.Object(
      {
        url: Type.String({ pattern: '^(sqlite:|postgres://|postgresql://)', default: 'sqlite:./data/switchyard.db' }),
        sqlite_checkpoint_pages: Type.Integer({
          minimum: 10,
          default: 300,
          description: 'SQLite: WAL pages after which a commit also checkpoints; fewer pages, shorter and more frequent pauses',
        }),
        statement_timeout_ms: PositiveInteger(10_000, 'PostgreSQL: longest a statement may run or wait for its answer before it fails'),
        connect_timeout_ms: PositiveInteger(5_000, 'PostgreSQL: longest a connection may take to open, or a query wait for a free connection'),
      },
      { additionalProperties: false, default: {} },
    ),
    state: Type.Object(
      {
        url: Type.String({ pattern: '^(memory$|redis://|rediss://)', default: 'memory' }),
        key_prefix: Type.String({
          pattern: '^[A-Za-z0-9._:-]{1,64}$',
          default: 'switchyard:',
          description: 'Redis: what every key and channel begins with, so that several deployments can share one Redis',
        }),
        slot_lease: Duration(
          '30s',
          'a max_concurrent slot is a lease this long, renewed every third of it while its request lives: a crashed process\'s slots are free within it',
        ),
        request_timeout_ms: PositiveInteger(
          150,
          'Redis: how long a request waits for one state operation (its admission, its session binding) before it goes on as when the state is down',
        ),
        lock_lease_ms: PositiveInteger(60_000, 'how long a lock shared through the state (a ChatGPT account refresh) outlives its holder; renewed every quarter of it while held'),
      },
      { additionalProperties: false, default: {} },
    ),
    routing: Type.Object(
      {
        max_attempts: PositiveInteger(3, 'credentials tried for one request before its failure is returned'),
        max_cooldown: Duration('5m', 'the longest a failing or rate-limited credential is kept out of use'),
        queue_timeout: Duration('5s', 'how long a request waits for a credential below its max_in_flight'),
        session_ttl: Duration('1h', 'how long a session stays bound to its credential after its last request'),
        infer_sessions: Type.Boolean({ default: true, description: 'give a chat request without a session id one inferred from its conversation' }),
        max_sessions_per_team: PositiveInteger(10_000, "session bindings one team holds at once; past it the team's earliest bound sessions are unbound"),
      },
      { additionalProperties: false, default: {} },
    ),
    responses: Type.Object(
      {
        retention: Duration('24h', 'how long a response made by conversion is kept for previous_response_id and item_reference (docs/responses-api.md)'),
        max_bytes: PositiveInteger(256 * 1024 * 1024, 'bytes all stored responses may take together; past it the oldest, whatever their team, are evicted'),
        max_bytes_per_team: PositiveInteger(32 * 1024 * 1024, "bytes one team's stored responses may take; past it the team's oldest are evicted"),
      },
      { additionalProperties: false, default: {} },
    ),
    security: Type.Object(
      {
        secret_key: Type.Optional(
          Type.String({ minLength: 1, description: 'SWITCHYARD_SECRET_KEY: 32 bytes as 64 hex digits or base64; seals the OAuth tokens of accounts added at run time' }),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    console: Type.Object(
      {
        enabled: Type.Boolean({ default: true, description: 'serve the web console at /console (docs/console.md)' }),
        idle_timeout: Duration('12h', 'a console sign-in ends after this long without a call'),
        max_age: Duration('7d', 'a console sign-in ends this long after it began, used or not'),
        origins: Type.Array(Type.String({ pattern: '^https?://[^/]+$' }), {
          default: [],
          description: 'origins the console is also served from (a reverse proxy that rewrites Host, e.g. https://gateway.example.com), for the CSRF origin check',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    auth: Type.Object(
      {
        token_prefix: Type.String({ pattern: '^[a-z][a-z0-9]{1,15}_$', default: 'svc_' }),
        change_poll_ms: PositiveInteger(2_000, 'safety-net poll for token changes made by other processes'),
      },
      { additionalProperties: false, default: {} },
    ),
    logging: Type.Object(
      {
        level: Type.Union(
          ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
          { default: 'info' },
        ),
        file: Type.Optional(Type.String({ minLength: 1, description: 'write the log lines to this file instead of stdout, reopened on SIGHUP or SIGUSR2; relative to the config file' })),
        access: Type.Boolean({ default: true, description: 'one info line per /v1 request when it ends' }),
        failure_interval_ms: PositiveInteger(10_000, 'a repeated failure (database, shared state) is logged once this often per kind, with a count'),
      },
      { additionalProperties: false, default: {} },
    ),
    request_log: Type.Object(
      {
        batch_size: PositiveInteger(100, 'rows written per insert; the event loop runs between batches'),
        flush_interval_ms: PositiveInteger(200, 'longest a row waits in the queue: what a crash (kill -9) of the process loses'),
        max_queue: PositiveInteger(100_000, 'rows held while the database is unavailable before the oldest are dropped'),
      },
      { additionalProperties: false, default: {} },
    ),
    defaults: Type.Object(
      { transcription_model: Type.Optional(Type.String({ minLength: 1, description: 'used when a transcription request names no model' })) },
      { additionalProperties: false, default: {} },
    ),
    upstreams: Type.Array(UpstreamConfigSchema, { default: [] }),
    models: Type.Array(ModelConfigSchema, { default: [] }),
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
export type ModelConfig = Static<typeof ModelConfigSchema>;
export type RouteConfig = Static<typeof RouteConfigSchema>;
export type ModelType = (typeof MODEL_TYPES)[number];
export type ProviderKind = (typeof PROVIDER_KINDS)[number];
export type RoutingStrategy = (typeof ROUTING_STRATEGIES)[number];
export type RoutingConfig = Static<typeof ConfigSchema>['routing'];
