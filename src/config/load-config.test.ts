import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadCommonConfig, loadConfig, requestLogRetentionMs } from './index.js';

let directory: string;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'switchyard-config-'));
});
afterEach(() => {
  rmSync(directory, { recursive: true, force: true });
});

function write(name: string, text: string): string {
  const path = join(directory, name);
  writeFileSync(path, text);
  return path;
}

function failure(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const MINIMAL = `
upstreams:
  - id: openai-a
    provider: openai
    api_key: \${OPENAI_API_KEY}
models:
  - id: gpt-4o-mini
    type: chat
    routes:
      - { upstream: openai-a, model: gpt-4o-mini }
`;

describe('where the config comes from', () => {
  it('uses built-in defaults when there is no file', () => {
    const { config, source } = loadConfig({ cwd: directory, env: {} });
    expect(source).toBeNull();
    expect(config.server).toEqual({
      host: '127.0.0.1',
      port: 8080,
      workers: 1,
      body_limit_bytes: 16 * 1024 * 1024,
      drain_delay_ms: 0,
      shutdown_timeout_ms: 30_000,
      body_timeout_ms: 30_000,
      max_connections: 10_000,
      max_connections_per_client: 2_000,
      trusted_proxies: [],
      header_timeout_ms: 10_000,
      paused_stream_timeout_ms: 60_000,
      cors: { allowed_origins: [] },
    });
    expect(config.database.url).toBe('sqlite:./data/switchyard.db');
    expect(config.request_log.retention).toBe('90d');
    expect(requestLogRetentionMs(config.request_log.retention)).toBe(90 * 86_400_000);
    expect(config.state.url).toBe('memory');
    expect(config.auth.token_prefix).toBe('svc_');
    expect(config.models).toEqual([]);
    expect(config.upstreams.map(({ id, provider }) => ({ id, provider }))).toEqual([{ id: 'local', provider: 'local' }]);
  });

  it('reads request_log.retention as a duration of at least an hour, or forever (null)', () => {
    const retention = (text: string) =>
      requestLogRetentionMs(
        loadConfig({ cwd: directory, configPath: write('r.yaml', `request_log: { retention: ${text} }`), env: {} }).config.request_log.retention,
      );
    expect(retention('1h')).toBe(3_600_000);
    expect(retention('12w')).toBe(12 * 7 * 86_400_000);
    expect(retention('forever')).toBeNull();
  });

  it('serves no built-in upstream when a file names none', () => {
    const path = write('no-upstreams.yaml', 'server: { port: 1004 }');
    expect(loadConfig({ cwd: directory, configPath: path, env: {} }).config.upstreams).toEqual([]);
  });

  it('prefers --config, then SWITCHYARD_CONFIG, then ./switchyard.yaml', () => {
    const fromFlag = write('flag.yaml', 'server: { port: 1001 }');
    const fromEnv = write('env.yaml', 'server: { port: 1002 }');
    write('switchyard.yaml', 'server: { port: 1003 }');
    expect(loadConfig({ cwd: directory, configPath: fromFlag, env: { SWITCHYARD_CONFIG: fromEnv } }).config.server.port).toBe(1001);
    expect(loadConfig({ cwd: directory, env: { SWITCHYARD_CONFIG: fromEnv } }).config.server.port).toBe(1002);
    const local = loadConfig({ cwd: directory, env: {} });
    expect(local.config.server.port).toBe(1003);
    expect(local.source).toBe(join(directory, 'switchyard.yaml'));
  });

  it('names a file given explicitly that does not exist', () => {
    expect(failure(() => loadConfig({ cwd: directory, configPath: 'missing.yaml', env: {} })).key).toBe('--config');
    expect(failure(() => loadConfig({ cwd: directory, env: { SWITCHYARD_CONFIG: 'gone.yaml' } })).key).toBe('SWITCHYARD_CONFIG');
  });
});

describe('the shipped example', () => {
  it('switchyard.example.yaml is a valid config', () => {
    const example = new URL('../../switchyard.example.yaml', import.meta.url).pathname;
    const { config } = loadConfig({ configPath: example, cwd: directory, env: { OPENAI_API_KEY: 'sk-example' } });
    expect(config.models.map((model) => model.id)).toEqual(['gpt-4o-mini', 'llama3']);
    expect(config.upstreams.map((upstream) => upstream.provider)).toEqual(['openai', 'openai']);
  });
});

describe('environment', () => {
  it('expands ${VAR}, ${VAR:-default}, ${VAR-default} and $$ in values', () => {
    const path = write(
      'c.yaml',
      `${MINIMAL}
server:
  host: \${HOST:-0.0.0.0}
  port: \${PORT}
auth:
  token_prefix: \${PREFIX-svc_}
database:
  url: "sqlite:./\${NAME}$$.db"
`,
    );
    const { config } = loadConfig({ cwd: directory, configPath: path, env: { OPENAI_API_KEY: 'sk-1', PORT: '9090', HOST: '', NAME: 'db' } });
    expect(config.upstreams[0]?.api_key).toBe('sk-1');
    expect(config.server.host).toBe('0.0.0.0');
    expect(config.server.port).toBe(9090);
    expect(config.auth.token_prefix).toBe('svc_');
    expect(config.database.url).toBe('sqlite:./db$.db');
  });

  it('refuses an unset variable without a default, naming the key', () => {
    const error = failure(() => loadConfig({ cwd: directory, configPath: write('c.yaml', MINIMAL), env: {} }));
    expect(error.message).toBe('upstreams[0].api_key: environment variable OPENAI_API_KEY is not set (write ${OPENAI_API_KEY:-} to allow it empty)');
  });

  it('applies the SWITCHYARD_* overrides over the file', () => {
    const path = write('c.yaml', 'server: { host: 10.0.0.1, port: 1 }\ndatabase: { url: "sqlite:a.db" }');
    const { config } = loadConfig({
      cwd: directory,
      configPath: path,
      env: { SWITCHYARD_HOST: '::1', SWITCHYARD_PORT: '8181', SWITCHYARD_DATABASE_URL: 'postgres://db/x', SWITCHYARD_STATE_URL: 'redis://127.0.0.1:6379' },
    });
    expect(config.server).toMatchObject({ host: '::1', port: 8181 });
    expect(config.database.url).toBe('postgres://db/x');
    expect(config.state.url).toBe('redis://127.0.0.1:6379');
  });

  it("takes OpenTelemetry's OTEL_* variables only for the tracing keys the file leaves unset", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'gateway-eu', OTEL_TRACES_SAMPLER_ARG: '0.25' };
    const unset = loadConfig({ cwd: directory, configPath: write('c.yaml', 'database: { url: "sqlite:a.db" }'), env }).config;
    expect(unset.tracing).toMatchObject({ otlp_endpoint: 'http://collector:4318', service_name: 'gateway-eu', sample_ratio: 0.25 });
    expect(unset.tracing.otlp_traces_endpoint).toBeUndefined();
    const named = loadConfig({
      cwd: directory,
      configPath: write('c.yaml', 'database: { url: "sqlite:a.db" }\ntracing: { otlp_endpoint: "http://file:4318", sample_ratio: 0.5 }'),
      env: { ...env, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/v1/traces' },
    }).config;
    expect(named.tracing).toMatchObject({
      otlp_endpoint: 'http://file:4318',
      otlp_traces_endpoint: 'https://traces.example.com/v1/traces',
      service_name: 'gateway-eu',
      sample_ratio: 0.5,
    });
    const defaults = loadConfig({ cwd: directory, env: {} }).config.tracing;
    expect(defaults.otlp_endpoint).toBeUndefined();
    expect(defaults.sample_ratio).toBe(1);
    expect(failure(() => loadConfig({ cwd: directory, env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' } })).key).toBe(
      'tracing.otlp_endpoint (OTEL_EXPORTER_OTLP_ENDPOINT)',
    );
  });

  it('names the override variable when its value is invalid', () => {
    expect(failure(() => loadConfig({ cwd: directory, env: { SWITCHYARD_PORT: 'eighty' } })).key).toBe('server.port (SWITCHYARD_PORT)');
    expect(failure(() => loadConfig({ cwd: directory, env: { SWITCHYARD_DATABASE_URL: 'mysql://x' } })).key).toBe('database.url (SWITCHYARD_DATABASE_URL)');
  });
});

describe('invalid config: one line naming the key and the problem', () => {
  const cases: Array<[string, string, string]> = [
    ['server:\n  port: 70000', 'server.port', 'server.port: expected integer to be less or equal to 65535, got 70000'],
    ['server:\n  prot: 8080', 'server.prot', 'server.prot: unknown key'],
    ['logging:\n  level: loud', 'logging.level', 'logging.level: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"'],
    [
      'upstreams:\n  - id: a\n    provider: openia',
      'upstreams[0].provider',
      'upstreams[0].provider: must be one of openai, azure, anthropic, gemini, cohere, jina, tei, codex, local, got "openia"',
    ],
    ['upstreams:\n  - provider: openai', 'upstreams[0].id', 'upstreams[0].id: is required'],
    ['models:\n  - id: m\n    type: chat\n    routes: []', 'models[0].routes', 'models[0].routes: expected array length to be greater or equal to 1, got []'],
    [
      'upstreams:\n  - { id: a, provider: openai }\nmodels:\n  - id: m\n    type: chat\n    routes: [{ upstream: b, model: x }]',
      'models[0].routes[0].upstream',
      'models[0].routes[0].upstream: unknown upstream "b"',
    ],
    [
      'upstreams:\n  - { id: a, provider: openai }\nmodels:\n  - { id: m, type: chat, strategy: fastest, routes: [{ upstream: a, model: x }] }',
      'models[0].strategy',
      'models[0].strategy: must be one of weighted, least-busy, ordered, got "fastest"',
    ],
    [
      'upstreams:\n  - { id: a, provider: openai }\nmodels:\n  - { id: m, type: chat, routes: [{ upstream: a, model: x, priority: 1.5 }] }',
      'models[0].routes[0].priority',
      'models[0].routes[0].priority: expected integer, got 1.5',
    ],
    [
      'upstreams:\n  - { id: a, provider: openai, max_in_flight: 0 }',
      'upstreams[0].max_in_flight',
      'upstreams[0].max_in_flight: expected integer to be greater or equal to 1, got 0',
    ],
    ['routing:\n  max_cooldown: 5 minutes', 'routing.max_cooldown', 'routing.max_cooldown: must be a duration such as 500ms, 90s, 5m or 1h, got "5 minutes"'],
    ['routing:\n  session_ttl: 0s', 'routing.session_ttl', 'routing.session_ttl: must be a duration such as 500ms, 90s, 5m or 1h, got "0s"'],
    ['routing:\n  max_attempts: 0', 'routing.max_attempts', 'routing.max_attempts: expected integer to be greater or equal to 1, got 0'],
    ['state:\n  slot_lease: 500ms', 'state.slot_lease', 'state.slot_lease: must be at least 3s, got "500ms"'],
    ['request_log:\n  retention: 30m', 'request_log.retention', 'request_log.retention: must be at least 1h (or forever), got "30m"'],
    [
      'request_log:\n  retention: never',
      'request_log.retention',
      'request_log.retention: must be a duration of at least 1h, such as 30d, 12w or 2160h, or forever, got "never"',
    ],
    [
      'server:\n  trusted_proxies: [127.0.0.1, nginx]',
      'server.trusted_proxies[1]',
      'server.trusted_proxies[1]: "nginx" is not an IP address, a CIDR range (10.0.0.0/8, fd00::/8) or one of loopback, private',
    ],
    ['server:\n  trusted_proxies: [10.0.0.0/40]', 'server.trusted_proxies[0]', 'server.trusted_proxies[0]: "10.0.0.0/40": the prefix length must be 0 to 32'],
    ['state:\n  key_prefix: "has space"', 'state.key_prefix', 'state.key_prefix: must match ^[A-Za-z0-9._:-]{1,64}$, got "has space"'],
    ['upstreams:\n  - { id: a, provider: openai }\n  - { id: a, provider: openai }', 'upstreams[1].id', 'upstreams[1].id: duplicate upstream id "a"'],
    [
      'upstreams:\n  - { id: a, provider: openai }\nmodels:\n  - { id: m, type: chat, routes: [{ upstream: a, model: x }] }\n  - { id: n, type: chat, aliases: [m], routes: [{ upstream: a, model: y }] }',
      'models[1].aliases[0]',
      'models[1].aliases[0]: "m" is already a model id or another alias',
    ],
    [
      'upstreams:\n  - { id: a, provider: openai }\nmodels:\n  - { id: m, type: chat, aliases: ["claude-*-x"], routes: [{ upstream: a, model: x }] }',
      'models[0].aliases[0]',
      'models[0].aliases[0]: "claude-*-x": a * may only end an alias',
    ],
    [
      'upstreams:\n  - { id: a, provider: tei }',
      'upstreams[0].base_url',
      'upstreams[0].base_url: is required for tei: the address of the text-embeddings-inference server',
    ],
    [
      'upstreams:\n  - { id: a, provider: openai }\nmodels:\n  - { id: m, type: chat, routes: [{ upstream: a, model: x }] }\ndefaults:\n  transcription_model: m',
      'defaults.transcription_model',
      'defaults.transcription_model: "m" is not a configured transcription model',
    ],
  ];
  for (const [yaml, key, message] of cases) {
    it(`reports ${key}`, () => {
      const error = failure(() => loadConfig({ cwd: directory, configPath: write('c.yaml', yaml), env: {} }));
      expect(error.key).toBe(key);
      expect(error.message).toBe(message);
      expect(error.message).not.toContain('\n');
    });
  }

  it('reports broken YAML with its line', () => {
    const error = failure(() => loadConfig({ cwd: directory, configPath: write('c.yaml', 'server:\n  port: [1, 2\n'), env: {} }));
    expect(error.message).toMatch(/c\.yaml:\d+: invalid YAML/);
  });
});

describe("the commands other than serve: every section but the upstreams' own keys", () => {
  const upstreamsOnlyServeReads = `
upstreams:
  - id: east
    provider: azure
    api_key: \${AZURE_KEY}
    headers: { x-org: "\${ORG}" }
    network: { proxy: "\${PROXY}", ca_file: ./missing.pem }
    max_connections: -1
    engine_threads: 4
models:
  - { id: gpt, type: chat, routes: [{ upstream: east, model: gpt-4o }] }
`;

  it("reads each entry's id and provider alone: unset variables, a missing file, a bad value or a missing base_url there are serve's to report", () => {
    const path = write('c.yaml', upstreamsOnlyServeReads);
    const { config } = loadCommonConfig({ cwd: directory, configPath: path, env: {} });
    expect(config.upstreams).toEqual([{ id: 'east', provider: 'azure' }]);
    expect(config.models.map((model) => model.id)).toEqual(['gpt']);
    expect(failure(() => loadConfig({ cwd: directory, configPath: path, env: {} })).message).toBe(
      'upstreams[0].api_key: environment variable AZURE_KEY is not set (write ${AZURE_KEY:-} to allow it empty)',
    );
  });

  const refused: Array<[string, string, string]> = [
    [
      'an unset variable in what they read',
      'database:\n  url: ${DATABASE_URL}\n',
      'database.url: environment variable DATABASE_URL is not set (write ${DATABASE_URL:-} to allow it empty)',
    ],
    ['a misspelt section (it would hide the database the gateway uses)', 'databse:\n  url: sqlite:./x.db\n', 'databse: unknown key'],
    [
      'an entry without a provider',
      'upstreams:\n  - { id: a, api_key: "${K}" }\n',
      'upstreams[0].provider: must be one of openai, azure, anthropic, gemini, cohere, jina, tei, codex, local, got undefined',
    ],
    [
      'a route to an upstream that does not exist',
      'models:\n  - { id: m, type: chat, routes: [{ upstream: nope, model: x }] }\n',
      'models[0].routes[0].upstream: unknown upstream "nope"',
    ],
  ];
  for (const [name, yaml, message] of refused) {
    it(`still refuses ${name}`, () => {
      expect(failure(() => loadCommonConfig({ cwd: directory, configPath: write('c.yaml', yaml), env: {} })).message).toBe(message);
    });
  }
});
