import { isDeepStrictEqual } from 'node:util';
import type { TProperties } from '@sinclair/typebox';
import {
  ConfigError,
  endpointKey,
  groupEndpoints,
  type EndpointConfig,
  type ProviderKind,
  type SwitchyardConfig,
  type UpstreamConfig,
} from './config/index.js';
import type { Logger } from './observability/logger.js';
import type { AccountContext, AccountDocument, CredentialAccount, ProviderAdapter, ProviderModule } from './providers/provider-adapter.js';
import { PROVIDER_LOADERS } from './providers/registry.js';
import { checkUpstreamKeys } from './providers/shared/upstream-keys.js';
import type { CredentialEntry } from './routing/index.js';
import { withStateLock, type SharedState } from './state/index.js';

/** A credential as the gateway wires it: its route target, and the connection pool it draws on. */
export interface WiredCredential extends CredentialEntry {
  readonly pool: { readonly name: string; readonly size: number };
}

/**
 * Every adapter and credential of the gateway, live: accounts added at run time join the endpoint
 * their settings match (or a new one), and leave when removed.
 */
export class Endpoints {
  readonly adapters: ProviderAdapter[] = [];
  readonly credentials = new Map<string, WiredCredential>();
  private readonly byKey = new Map<string, { adapter: ProviderAdapter; pool: WiredCredential['pool'] }>();
  private readonly modules = new Map<ProviderKind, ProviderModule>();

  constructor(private readonly context: AccountContext) {}

  /** The provider's module when it is loaded already. */
  loadedModule(provider: ProviderKind): ProviderModule | undefined {
    return this.modules.get(provider);
  }

  /** The provider's module, loaded the first time a config or an account names it. */
  async module(provider: ProviderKind): Promise<ProviderModule | null> {
    const loaded = this.modules.get(provider);
    if (loaded !== undefined) return loaded;
    const load = PROVIDER_LOADERS[provider];
    if (load === undefined) return null;
    const module = await load();
    this.modules.set(provider, module);
    return module;
  }

  /** Wires one entry: its endpoint's adapter (made once per endpoint), its account when it is one. */
  async add(entry: UpstreamConfig, endpoint: EndpointConfig, options: { document?: AccountDocument; runtime?: boolean } = {}): Promise<WiredCredential> {
    const wired = await this.wire(entry, endpoint, options);
    this.credentials.set(entry.id, wired);
    return wired;
  }

  /**
   * The credentials as the config's `upstreams` would have them, beside the accounts added at run
   * time, without changing what is served (`adopt` does). An entry unchanged since `previous` keeps
   * its wired credential (its account, its refresh state); a changed or new one is wired anew, so a
   * request already under way keeps the credential it started with. Problems name the entry's key.
   */
  async prepare(upstreams: readonly UpstreamConfig[], previous: readonly UpstreamConfig[]): Promise<Map<string, WiredCredential>> {
    for (const [index, upstream] of upstreams.entries()) {
      const module = await this.module(upstream.provider);
      if (module === null) {
        const available = Object.keys(PROVIDER_LOADERS).join(', ');
        throw new ConfigError(`upstreams[${index}].provider`, `provider "${upstream.provider}" is not available in this version (available: ${available})`);
      }
      checkOwnKeys(upstream, index, module.upstreamKeys);
    }
    const next = new Map([...this.credentials].filter(([, wired]) => wired.runtime === true));
    const before = new Map(previous.map((entry) => [entry.id, entry]));
    for (const { endpoint, credentials: entries } of groupEndpoints([...upstreams])) {
      for (const entry of entries) {
        const current = this.credentials.get(entry.id);
        const unchanged = current !== undefined && current.runtime !== true && isDeepStrictEqual(before.get(entry.id), entry);
        try {
          next.set(entry.id, unchanged ? current : await this.wire(entry, endpoint));
        } catch (error) {
          if (error instanceof ConfigError) throw new ConfigError(`upstreams[${upstreams.indexOf(entry)}].${error.key}`, error.problem);
          throw error;
        }
      }
    }
    return next;
  }

  /** Serves the credentials `prepare` made, in one step: the next request sees them all, none sees half. */
  adopt(next: ReadonlyMap<string, WiredCredential>): void {
    // The accounts added at run time as they are now: one may have come or gone while `prepare` waited.
    const runtime = [...this.credentials].filter(([, wired]) => wired.runtime === true);
    this.credentials.clear();
    for (const [id, wired] of next) if (wired.runtime !== true) this.credentials.set(id, wired);
    for (const [id, wired] of runtime) if (!this.credentials.has(id)) this.credentials.set(id, wired);
  }

  private async wire(
    entry: UpstreamConfig,
    endpoint: EndpointConfig,
    options: { document?: AccountDocument; runtime?: boolean } = {},
  ): Promise<WiredCredential> {
    const module = (await this.module(entry.provider)) as ProviderModule;
    const key = endpointKey(entry);
    let shared = this.byKey.get(key);
    if (shared === undefined) {
      const adapter = module.create(endpoint);
      this.adapters.push(adapter);
      shared = { adapter, pool: { name: endpoint.name, size: endpoint.max_connections } };
      this.byKey.set(key, shared);
    }
    const account: CredentialAccount | undefined = module.account === undefined ? undefined : await module.account(entry, this.context, options.document);
    const credential = { id: entry.id, apiKey: entry.api_key, headers: entry.headers ?? {}, ...(account === undefined ? {} : { account }) };
    return {
      credential,
      provider: entry.provider,
      adapter: shared.adapter,
      pool: shared.pool,
      maxInFlight: entry.max_in_flight ?? null,
      ...(options.runtime === true ? { runtime: true } : {}),
    };
  }

  remove(id: string): void {
    this.credentials.delete(id);
  }

  close(): Promise<void> {
    return Promise.all(this.adapters.map((adapter) => adapter.close())).then(() => undefined);
  }
}

/**
 * The config's upstreams, wired: one adapter per endpoint (entries that differ only in their
 * credential share one, and its connection pool), each entry's credential bound to it. A problem
 * names the entry's key.
 */
export async function createEndpoints(config: SwitchyardConfig, context: AccountContext): Promise<Endpoints> {
  const endpoints = new Endpoints(context);
  try {
    endpoints.adopt(await endpoints.prepare(config.upstreams, []));
  } catch (error) {
    await endpoints.close();
    throw error;
  }
  return endpoints;
}

/** What OAuth accounts get from the gateway: a refresh lock shared through the state, and the log. */
export function accountContext(state: SharedState, logger: Logger, lockLeaseMs: number): AccountContext {
  return {
    // A waiter outlasts a dead holder's lease (twice over) and whatever the task says it may take.
    exclusive: (name, task, options) => withStateLock(state, name, task, { leaseMs: lockLeaseMs, waitMs: Math.max(2 * lockLeaseMs, options?.waitMs ?? 0) }),
    note: (level, fields, message) => logger[level](fields, message),
  };
}

/** An entry's provider-specific keys against its provider's schema; the error names the entry. */
function checkOwnKeys(upstream: UpstreamConfig, index: number, properties: TProperties): void {
  try {
    checkUpstreamKeys(upstream, properties);
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError(`upstreams[${index}].${error.key}`, error.problem);
    throw error;
  }
}
