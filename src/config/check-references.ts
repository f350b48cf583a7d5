import { parseDuration, TrustedProxies, TrustedProxyEntryError } from '../core/index.js';
import { ConfigError } from './config-error.js';
import type { SwitchyardConfig } from './config-schema.js';

/** Providers with no public address to default to. */
const BASE_URL_REQUIRED: Partial<Record<string, string>> = {
  azure: 'the resource endpoint, e.g. https://my-resource.openai.azure.com',
  tei: 'the address of the text-embeddings-inference server',
};

/**
 * A slot's lease is renewed every third of it over a Redis whose commands time out after 1 s:
 * shorter, a renewal could be late for the lease it renews.
 */
const MIN_SLOT_LEASE_MS = 3_000;

/** Shorter, a pass would remove rows of requests that may still be settling (and quotas of the hour read them). */
const MIN_RETENTION_MS = 3_600_000;

/** `request_log.retention` in milliseconds; null for `forever`. The schema checked its form. */
export function requestLogRetentionMs(text: string): number | null {
  if (text.trim() === 'forever') return null;
  return parseDuration(text) ?? 0;
}

/** What checkReferences reads: of an upstream entry its identity, and `base_url` when it was read whole. */
type ReferencedConfig = Pick<SwitchyardConfig, 'server' | 'state' | 'models' | 'defaults'> & {
  request_log?: Pick<SwitchyardConfig['request_log'], 'retention'>;
  upstreams: ReadonlyArray<{ id: string; provider: string; base_url?: string }>;
};

/**
 * What the schema cannot say: ids are unique, every route names an upstream that exists, and a
 * duration's floor. A required `base_url` is checked when the entries were read whole
 * (`upstreamKeys`): the commands other than `serve` read an entry's `id` and `provider` alone.
 */
export function checkReferences(config: ReferencedConfig, upstreamKeys = true): void {
  if ((parseDuration(config.state.slot_lease) ?? 0) < MIN_SLOT_LEASE_MS)
    throw new ConfigError('state.slot_lease', `must be at least 3s, got "${config.state.slot_lease}"`);
  const retention = config.request_log === undefined ? null : requestLogRetentionMs(config.request_log.retention);
  if (retention !== null && retention < MIN_RETENTION_MS)
    throw new ConfigError('request_log.retention', `must be at least 1h (or forever), got "${config.request_log?.retention}"`);
  try {
    TrustedProxies.parse(config.server.trusted_proxies);
  } catch (error) {
    if (error instanceof TrustedProxyEntryError) throw new ConfigError(`server.trusted_proxies[${error.index}]`, error.message);
    throw error;
  }
  const upstreamIds = new Set<string>();
  config.upstreams.forEach((upstream, index) => {
    if (upstreamIds.has(upstream.id)) throw new ConfigError(`upstreams[${index}].id`, `duplicate upstream id "${upstream.id}"`);
    upstreamIds.add(upstream.id);
    const needsBaseUrl = BASE_URL_REQUIRED[upstream.provider];
    if (upstreamKeys && needsBaseUrl !== undefined && upstream.base_url === undefined) {
      throw new ConfigError(`upstreams[${index}].base_url`, `is required for ${upstream.provider}: ${needsBaseUrl}`);
    }
  });
  const modelIds = new Map<string, string>();
  config.models.forEach((model, modelIndex) => {
    if (modelIds.has(model.id)) throw new ConfigError(`models[${modelIndex}].id`, `duplicate model id "${model.id}"`);
    modelIds.set(model.id, model.type);
    model.routes.forEach((route, routeIndex) => {
      const key = `models[${modelIndex}].routes[${routeIndex}]`;
      if (route.upstream === undefined && route.accounts === undefined)
        throw new ConfigError(key, 'names no upstream (or `accounts: codex` for the accounts added at run time)');
      if (route.upstream !== undefined && route.accounts !== undefined)
        throw new ConfigError(key, 'names both an upstream and accounts; a route is one or the other');
      if (route.accounts !== undefined && model.type !== 'chat')
        throw new ConfigError(`${key}.accounts`, `codex accounts serve chat models, not ${model.type}`);
      if (route.upstream !== undefined && !upstreamIds.has(route.upstream)) throw new ConfigError(`${key}.upstream`, `unknown upstream "${route.upstream}"`);
    });
  });
  // An alias may not take a name another model answers to: a request must reach one model.
  const names = new Set(modelIds.keys());
  config.models.forEach((model, modelIndex) => {
    (model.aliases ?? []).forEach((alias, aliasIndex) => {
      if (names.has(alias)) throw new ConfigError(`models[${modelIndex}].aliases[${aliasIndex}]`, `"${alias}" is already a model id or another alias`);
      if (alias.indexOf('*') !== -1 && alias.indexOf('*') !== alias.length - 1)
        throw new ConfigError(`models[${modelIndex}].aliases[${aliasIndex}]`, `"${alias}": a * may only end an alias`);
      names.add(alias);
    });
  });
  const transcriptionDefault = config.defaults.transcription_model;
  if (transcriptionDefault !== undefined && modelIds.get(transcriptionDefault) !== 'transcription') {
    throw new ConfigError('defaults.transcription_model', `"${transcriptionDefault}" is not a configured transcription model`);
  }
}
