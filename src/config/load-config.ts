import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Value, type ValueError } from '@sinclair/typebox/value';
import type { Static } from '@sinclair/typebox';
import { parseDocument } from 'yaml';
import { ConfigError } from './config-error.js';
import { ConfigSchema, UpstreamConfigSchema, type SwitchyardConfig, type UpstreamConfig } from './config-schema.js';
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

const DEFAULT_FILE = 'switchyard.yaml';

/**
 * With no file at all the gateway serves the built-in `local` provider, so a fresh install
 * answers real requests offline. A config file that names no upstream gets none.
 */
const DEFAULT_DOCUMENT = { upstreams: [{ id: 'local', provider: 'local' }] };

/** Environment variables that override one key each, applied after the file is read. */
const ENVIRONMENT_OVERRIDES: ReadonlyArray<{ variable: string; section: 'server' | 'database' | 'state' | 'security'; key: string }> = [
  { variable: 'SWITCHYARD_HOST', section: 'server', key: 'host' },
  { variable: 'SWITCHYARD_PORT', section: 'server', key: 'port' },
  { variable: 'SWITCHYARD_DATABASE_URL', section: 'database', key: 'url' },
  { variable: 'SWITCHYARD_STATE_URL', section: 'state', key: 'url' },
  { variable: 'SWITCHYARD_SECRET_KEY', section: 'security', key: 'secret_key' },
];

/**
 * The one place that reads configuration from files and the environment. Order: `--config`,
 * then `SWITCHYARD_CONFIG`, then `./switchyard.yaml`, then built-in defaults.
 */
export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const source = locateConfigFile(options.configPath, env, cwd);
  const document = source === null ? structuredClone(DEFAULT_DOCUMENT) : readYaml(source);
  const expanded = expandEnvironment(document, env);
  if (expanded === null || typeof expanded !== 'object' || Array.isArray(expanded)) {
    throw new ConfigError('', `${source}: the document must be a mapping of keys`);
  }
  const overridden = applyOverrides(expanded as Record<string, unknown>, env);
  return { config: validate(overridden, env, source === null ? cwd : dirname(source)), source };
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
  for (const { variable, section, key } of ENVIRONMENT_OVERRIDES) {
    const value = env[variable];
    if (value === undefined || value === '') continue;
    const current = document[section];
    const target = current !== null && typeof current === 'object' && !Array.isArray(current) ? (current as Record<string, unknown>) : {};
    target[key] = value;
    document[section] = target;
  }
  return document;
}

function validate(document: Record<string, unknown>, env: NodeJS.ProcessEnv, baseDirectory: string): SwitchyardConfig {
  // Convert first so that "8080" from an environment variable becomes a number where one is expected.
  const converted = Value.Convert(ConfigSchema, structuredClone(document));
  // Convert truncates a number where an integer is expected (a priority of 1.5 would become 1).
  const truncated = changedNumber(document, converted, '');
  if (truncated !== null) throw new ConfigError(truncated.key, `expected integer, got ${truncated.value}`);
  const withDefaults = Value.Default(ConfigSchema, converted);
  const firstError = Value.Errors(ConfigSchema, withDefaults).First();
  if (firstError !== undefined) throw describeSchemaError(firstError, env);
  const config = withDefaults as Static<typeof ConfigSchema>;
  const resolved: SwitchyardConfig = {
    ...config,
    // Files the config names are relative to the config file.
    server: { ...config.server, ...(config.server.pid_file === undefined ? {} : { pid_file: resolve(baseDirectory, config.server.pid_file) }) },
    logging: { ...config.logging, ...(config.logging.file === undefined ? {} : { file: resolve(baseDirectory, config.logging.file) }) },
    upstreams: config.upstreams.map((upstream, index) => ({
      ...upstream,
      // A file an entry names is relative to the config file, like the network's certificates.
      ...(typeof (upstream as Record<string, unknown>)['auth_file'] === 'string' ? { auth_file: resolve(baseDirectory, (upstream as Record<string, unknown>)['auth_file'] as string) } : {}),
      network: resolveNetwork(upstream.network, `upstreams[${index}].network`, env, baseDirectory),
    })),
  };
  checkReferences(resolved);
  return resolved;
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
  const withDefaults = Value.Default(UpstreamConfigSchema, Value.Convert(UpstreamConfigSchema, structuredClone({ ...fields }))) as Static<typeof UpstreamConfigSchema>;
  const firstError = Value.Errors(UpstreamConfigSchema, withDefaults).First();
  if (firstError !== undefined) throw new ConfigError(pointerToKey(firstError.path) || 'account', firstError.message);
  return { ...withDefaults, network: resolveNetwork(withDefaults.network, 'network', env, process.cwd()) };
}
