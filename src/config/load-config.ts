import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Value, type ValueError } from '@sinclair/typebox/value';
import type { Static } from '@sinclair/typebox';
import { parseDocument } from 'yaml';
import { ConfigError } from './config-error.js';
import { ConfigSchema, UpstreamConfigSchema, type ProviderKind, type SwitchyardConfig, type UpstreamConfig } from './config-schema.js';
import { expandEnvironment } from './expand-environment.js';
import { checkReferences } from './check-references.js';
import { resolveNetwork } from './resolve-network.js';

export interface LoadConfigOptions {
  /** `--config FILE` from the command line; wins over everything else. */
  configPath?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface LoadedConfig {
  config: SwitchyardConfig;
  /** The file the config came from, or null for the built-in defaults. */
  source: string | null;
}

/** What an `upstreams[]` entry is to the commands that never call an upstream: a name and a kind. */
export interface UpstreamIdentity {
  id: string;
  provider: ProviderKind;
  /**
   * A `local` entry whole: it holds no secret, and the models it publishes (its `models_dir`)
   * are what `tokens --models` may name.
   */
  local?: UpstreamConfig;
}

/**
 * The config as the commands other than `serve` read it (`tokens`, `teams`, `projects`,
 * `credentials`, `requests`, `backup`, `migrate`): every section but the upstreams' own keys.
 * Their secrets live in the gateway's environment, which these commands need not have.
 */
export type CommonConfig = Omit<SwitchyardConfig, 'upstreams'> & { upstreams: readonly UpstreamIdentity[] };

export interface LoadedCommonConfig {
  config: CommonConfig;
  source: string | null;
}

/** The keys of an `upstreams[]` entry that the commands other than `serve` read. */
const UPSTREAM_IDENTITY_KEYS = ['id', 'provider'] as const;

const DEFAULT_FILE = 'switchyard.yaml';

/**
 * With no file at all the gateway serves the built-in `local` provider, so a fresh install
 * answers real requests offline. A config file that names no upstream gets none.
 */
const DEFAULT_DOCUMENT = { upstreams: [{ id: 'local', provider: 'local' }] };

/**
 * Environment variables that set one key each, applied after the file is read. A `SWITCHYARD_*`
 * variable overrides the file; OpenTelemetry's standard ones (`fallback`) fill their key only when
 * the file leaves it unset (the file is the more specific of the two).
 */
const ENVIRONMENT_OVERRIDES: ReadonlyArray<{
  variable: string;
  section: 'server' | 'database' | 'state' | 'security' | 'tracing';
  key: string;
  fallback?: true;
}> = [
  { variable: 'SWITCHYARD_HOST', section: 'server', key: 'host' },
  { variable: 'SWITCHYARD_PORT', section: 'server', key: 'port' },
  { variable: 'SWITCHYARD_DATABASE_URL', section: 'database', key: 'url' },
  { variable: 'SWITCHYARD_STATE_URL', section: 'state', key: 'url' },
  { variable: 'SWITCHYARD_SECRET_KEY', section: 'security', key: 'secret_key' },
  { variable: 'OTEL_EXPORTER_OTLP_ENDPOINT', section: 'tracing', key: 'otlp_endpoint', fallback: true },
  { variable: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', section: 'tracing', key: 'otlp_traces_endpoint', fallback: true },
  { variable: 'OTEL_SERVICE_NAME', section: 'tracing', key: 'service_name', fallback: true },
  // The ratio of OpenTelemetry's `parentbased_traceidratio` sampler, the one the gateway uses.
  { variable: 'OTEL_TRACES_SAMPLER_ARG', section: 'tracing', key: 'sample_ratio', fallback: true },
];

/**
 * The one place that reads configuration from files and the environment. Order: `--config`,
 * then `SWITCHYARD_CONFIG`, then `./switchyard.yaml`, then built-in defaults.
 */
export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const { document, source, env, cwd } = readDocument(options);
  const config = validate(applyOverrides(expandDocument(document, env), env), env);
  const baseDirectory = source === null ? cwd : dirname(source);
  const resolved: SwitchyardConfig = {
    ...withFilesResolved(config, baseDirectory),
    upstreams: config.upstreams.map((upstream, index) => {
      const authFile = (upstream as Record<string, unknown>)['auth_file'];
      return {
        ...upstream,
        // A file an entry names is relative to the config file, like the network's certificates.
        ...(typeof authFile === 'string' ? { auth_file: resolve(baseDirectory, authFile) } : {}),
        network: resolveNetwork(upstream.network, `upstreams[${index}].network`, env, baseDirectory),
      };
    }),
  };
  checkReferences(resolved);
  return { config: resolved, source };
}

/**
 * The same lookup, file and checks as `loadConfig`, but of each `upstreams[]` entry only `id` and
 * `provider` are read: an entry's key, headers, network and provider keys are neither expanded
 * nor checked, so a `${VAR}` there need not be set. `serve` reads and checks them.
 */
export function loadCommonConfig(options: LoadConfigOptions = {}): LoadedCommonConfig {
  const { document, source, env, cwd } = readDocument(options);
  const upstreams = document['upstreams'];
  if (Array.isArray(upstreams)) document['upstreams'] = upstreams.map(upstreamIdentity);
  const config = validate(applyOverrides(expandDocument(document, env), env), env);
  const common: CommonConfig = {
    ...withFilesResolved(config, source === null ? cwd : dirname(source)),
    upstreams: config.upstreams.map((upstream, index) => {
      const identity = { id: upstream.id, provider: upstream.provider };
      if (upstream.provider !== 'local') return identity;
      const network = resolveNetwork(upstream.network, `upstreams[${index}].network`, env, source === null ? cwd : dirname(source));
      return { ...identity, local: { ...upstream, network } };
    }),
  };
  checkReferences(common, false);
  return { config: common, source };
}

/** The files `server` and `logging` name are relative to the config file, as an upstream's are. */
function withFilesResolved<T extends Pick<SwitchyardConfig, 'server' | 'logging'>>(config: T, baseDirectory: string): T {
  const { pid_file: pidFile } = config.server;
  const { file } = config.logging;
  return {
    ...config,
    server: { ...config.server, ...(pidFile === undefined ? {} : { pid_file: resolve(baseDirectory, pidFile) }) },
    logging: { ...config.logging, ...(file === undefined ? {} : { file: resolve(baseDirectory, file) }) },
  };
}

function readDocument(options: LoadConfigOptions): { document: Record<string, unknown>; source: string | null; env: NodeJS.ProcessEnv; cwd: string } {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const source = locateConfigFile(options.configPath, env, cwd);
  const document = source === null ? structuredClone(DEFAULT_DOCUMENT) : readYaml(source);
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    throw new ConfigError('', `${source}: the document must be a mapping of keys`);
  }
  return { document: document as Record<string, unknown>, source, env, cwd };
}

/** Expansion keeps a document's shape: a mapping stays a mapping. */
function expandDocument(document: Record<string, unknown>, env: NodeJS.ProcessEnv): Record<string, unknown> {
  return expandEnvironment(document, env) as Record<string, unknown>;
}

/** An entry narrowed to the keys the commands other than `serve` read; anything but a mapping is left for the schema to refuse. */
function upstreamIdentity(entry: unknown): unknown {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return entry;
  const fields = entry as Record<string, unknown>;
  if (fields['provider'] === 'local') return entry;
  return Object.fromEntries(UPSTREAM_IDENTITY_KEYS.filter((key) => key in fields).map((key) => [key, fields[key]]));
}

function locateConfigFile(configPath: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string | null {
  const explicit = configPath ?? (env['SWITCHYARD_CONFIG'] || undefined);
  if (explicit !== undefined) {
    const path = resolve(cwd, explicit);
    if (!existsSync(path)) {
      throw new ConfigError(configPath === undefined ? 'SWITCHYARD_CONFIG' : '--config', `file ${path} does not exist`);
    }
    return path;
  }
  const fallback = resolve(cwd, DEFAULT_FILE);
  return existsSync(fallback) ? fallback : null;
}

function readYaml(path: string): unknown {
  const document = parseDocument(readFileSync(path, 'utf8'), { prettyErrors: true });
  const [firstError] = document.errors;
  if (firstError !== undefined) {
    const line = firstError.linePos?.[0]?.line;
    throw new ConfigError('', `${path}${line === undefined ? '' : `:${line}`}: invalid YAML: ${firstError.message.split('\n')[0]}`);
  }
  return document.toJS() ?? {};
}

function applyOverrides(document: Record<string, unknown>, env: NodeJS.ProcessEnv): Record<string, unknown> {
  for (const { variable, section, key, fallback } of ENVIRONMENT_OVERRIDES) {
    const value = env[variable];
    if (value === undefined || value === '') continue;
    const current = document[section];
    const target = current !== null && typeof current === 'object' && !Array.isArray(current) ? (current as Record<string, unknown>) : {};
    if (fallback === true) target[key] ??= value;
    else target[key] = value;
    document[section] = target;
  }
  return document;
}

/** The document checked against the schema, with its defaults. */
function validate(document: Record<string, unknown>, env: NodeJS.ProcessEnv): Static<typeof ConfigSchema> {
  // Convert first so that "8080" from an environment variable becomes a number where one is expected.
  const converted = Value.Convert(ConfigSchema, structuredClone(document));
  // Convert truncates a number where an integer is expected (a priority of 1.5 would become 1).
  const truncated = changedNumber(document, converted, '');
  if (truncated !== null) throw new ConfigError(truncated.key, `expected integer, got ${truncated.value}`);
  const withDefaults = Value.Default(ConfigSchema, converted);
  const firstError = Value.Errors(ConfigSchema, withDefaults).First();
  if (firstError !== undefined) throw describeSchemaError(firstError, env);
  return withDefaults as Static<typeof ConfigSchema>;
}

/** The first number of the document that conversion changed, with its key. */
function changedNumber(original: unknown, converted: unknown, key: string): { key: string; value: number } | null {
  if (typeof original === 'number') return typeof converted === 'number' && converted !== original ? { key, value: original } : null;
  if (original === null || typeof original !== 'object' || converted === null || typeof converted !== 'object') return null;
  for (const [name, value] of Object.entries(original)) {
    const child = Array.isArray(original) ? `${key}[${name}]` : key === '' ? name : `${key}.${name}`;
    const found = changedNumber(value, (converted as Record<string, unknown>)[name], child);
    if (found !== null) return found;
  }
  return null;
}

function describeSchemaError(error: ValueError, env: NodeJS.ProcessEnv): ConfigError {
  const key = pointerToKey(error.path);
  const overriddenBy = ENVIRONMENT_OVERRIDES.find(({ variable, section, key: name }) => `${section}.${name}` === key && Boolean(env[variable]));
  const label = overriddenBy === undefined ? key : `${key} (${overriddenBy.variable})`;
  const allowed = literalChoices(error.schema);
  if (allowed !== null) return new ConfigError(label, `must be one of ${allowed.join(', ')}, got ${JSON.stringify(error.value)}`);
  if (error.message.startsWith('Unexpected property')) return new ConfigError(label, 'unknown key');
  if (error.value === undefined) return new ConfigError(label, 'is required');
  const { pattern, hint } = error.schema as { pattern?: string; hint?: string };
  if (hint !== undefined) return new ConfigError(label, `must be ${hint}, got ${JSON.stringify(error.value)}`);
  if (pattern !== undefined) return new ConfigError(label, `must match ${pattern}, got ${JSON.stringify(error.value)}`);
  return new ConfigError(label, `${error.message.toLowerCase()}, got ${JSON.stringify(error.value)}`);
}

function literalChoices(schema: unknown): string[] | null {
  const anyOf = (schema as { anyOf?: Array<{ const?: unknown }> }).anyOf;
  if (anyOf === undefined || !anyOf.every((member) => typeof member.const === 'string')) return null;
  return anyOf.map((member) => String(member.const));
}

/** `/models/0/routes/1/weight` → `models[0].routes[1].weight` */
function pointerToKey(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((key, segment) => (/^\d+$/.test(segment) ? `${key}[${segment}]` : key === '' ? segment : `${key}.${segment}`), '');
}

/**
 * The entry of an upstream account added at run time (stored in the database, not in the file):
 * its id, provider and endpoint keys, every other key at its default, the network from the
 * environment (`HTTPS_PROXY`…) as an entry without a `network` block gets it.
 */
export function runtimeUpstream(fields: Readonly<Record<string, unknown>>, env: NodeJS.ProcessEnv = process.env): UpstreamConfig {
  const withDefaults = Value.Default(UpstreamConfigSchema, Value.Convert(UpstreamConfigSchema, structuredClone({ ...fields }))) as Static<
    typeof UpstreamConfigSchema
  >;
  const firstError = Value.Errors(UpstreamConfigSchema, withDefaults).First();
  if (firstError !== undefined) throw new ConfigError(pointerToKey(firstError.path) || 'account', firstError.message);
  return { ...withDefaults, network: resolveNetwork(withDefaults.network, 'network', env, process.cwd()) };
}
