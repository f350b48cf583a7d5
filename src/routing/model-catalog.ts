import { ConfigError } from '../config/config-error.js';
import type { ModelConfig, ModelType, ProviderKind, RoutingStrategy } from '../config/index.js';
import type {
  CapabilityOf,
  Credential,
  MessagesProvider,
  NativeProvider,
  ProviderAdapter,
  ResponsesProvider,
  StatelessResponsesProvider,
} from '../providers/provider-adapter.js';
import { hash32 } from './rendezvous.js';

/** A configured credential (one `upstreams[]` entry) and the adapter of the endpoint it reaches. */
export interface CredentialEntry {
  readonly credential: Credential;
  readonly provider: ProviderKind;
  readonly adapter: ProviderAdapter;
  /** `upstreams[].max_in_flight`: requests at once on this credential; null for no cap. */
  readonly maxInFlight: number | null;
  /** Added at run time (an account in the database), not in the config: routes of `accounts: <provider>` reach it. */
  readonly runtime?: boolean;
}

/** One credential able to serve a model of type `Type`, and what to call on it. */
export interface Route<Type extends ModelType = ModelType> {
  /** What the router chooses; handed to the provider on every call. */
  readonly credential: Credential;
  /** The model name the upstream knows, which may differ from the public id. */
  readonly upstreamModel: string;
  readonly weight: number;
  /** `ordered` strategy: lower is tried first. */
  readonly priority: number;
  readonly maxInFlight: number | null;
  /** The credential id's hash, computed once, for rendezvous hashing. */
  readonly credentialHash: number;
  /** The endpoint adapter's capability for this type: a chat route can only be asked to chat. */
  readonly provider: CapabilityOf[Type];
  /** The native passthrough, on credentials that offer it (OAuth accounts: codex). */
  readonly native: NativeProvider | null;
  /** The Responses API passed through, on credentials whose upstream speaks it (openai); null: `/v1/responses` is converted to chat. */
  readonly responses: ResponsesProvider | null;
  /** The Responses API sent as such to an upstream that keeps nothing (codex); absent: see `responses`. */
  readonly statelessResponses?: StatelessResponsesProvider | null;
  /** The Messages API passed through, on credentials whose upstream speaks it (anthropic); null: `/v1/messages` is converted to chat. */
  readonly messages?: MessagesProvider | null;
}

export interface CatalogModel<Type extends ModelType = ModelType> {
  readonly id: string;
  /** Other names it answers to (`models[].aliases`); one ending in `*` takes every name that starts with the rest. */
  readonly aliases?: readonly string[];
  readonly type: Type;
  readonly ownedBy: string;
  readonly created: number;
  readonly routes: readonly Route<Type>[];
  readonly totalWeight: number;
  readonly strategy: RoutingStrategy;
  /** Speech models: the voice when a request names none (else the provider's default). */
  readonly defaultVoice?: string;
}

/** The names a catalog resolves: ids and exact aliases, then alias prefixes, longest first. */
interface CatalogNames {
  readonly models: Map<string, CatalogModel>;
  readonly exact: Map<string, CatalogModel>;
  readonly prefixes: ReadonlyArray<readonly [string, CatalogModel]>;
}

/** The models callers see, each with the pool of upstream routes that serve it. */
export class ModelCatalog {
  private names: CatalogNames;

  constructor(models: readonly CatalogModel[]) {
    const exact = new Map<string, CatalogModel>();
    const prefixes: Array<[string, CatalogModel]> = [];
    for (const model of models) {
      for (const alias of model.aliases ?? []) {
        if (alias.endsWith('*')) prefixes.push([alias.slice(0, -1), model]);
        else exact.set(alias, model);
      }
    }
    prefixes.sort(([a], [b]) => b.length - a.length);
    this.names = { models: new Map(models.map((model) => [model.id, model])), exact, prefixes };
  }

  /** The model a request names: by its id, else by an alias. */
  get(name: string): CatalogModel | undefined {
    const { models, exact, prefixes } = this.names;
    const model = models.get(name) ?? exact.get(name);
    if (model !== undefined || prefixes.length === 0) return model;
    for (const [prefix, candidate] of prefixes) if (name.startsWith(prefix)) return candidate;
    return undefined;
  }

  /**
   * Takes the models of a catalog built anew (accounts were added or removed at run time): a
   * request already routed keeps the model object it resolved; the next one sees the new routes.
   */
  replaceWith(rebuilt: ModelCatalog): void {
    this.names = rebuilt.names;
  }

  all(): IterableIterator<CatalogModel> {
    return this.names.models.values();
  }
}

const nativeModels = new WeakMap<CatalogModel, CatalogModel<'chat'> | null>();

/**
 * The model as the native endpoint routes it: its routes that offer the native passthrough
 * (OAuth accounts), or null when none does. Made once per model.
 */
export function nativeModelOf(model: CatalogModel<'chat'>): CatalogModel<'chat'> | null {
  let native = nativeModels.get(model);
  if (native === undefined) {
    const routes = model.routes.filter((route) => route.native !== null);
    // A model with no routes yet (`accounts: codex` before any was added) is answered 503 by the router, not refused.
    native =
      model.routes.length === 0 ? model : routes.length === 0 ? null : { ...model, routes, totalWeight: routes.reduce((sum, route) => sum + route.weight, 0) };
    nativeModels.set(model, native);
  }
  return native;
}

/**
 * Builds the catalog from configuration and the accounts added at run time: a route that names an
 * upstream is one credential; a route of `accounts: codex` is one route per such account, with
 * the route's model, weight and priority. `created` defaults to the time the catalog was built,
 * since a configured alias has no creation date of its own.
 */
export function buildCatalog(models: readonly ModelConfig[], credentials: ReadonlyMap<string, CredentialEntry>, now: number = Date.now()): ModelCatalog {
  return new ModelCatalog(
    models.map((model, modelIndex) => {
      const routes = model.routes.flatMap((route, routeIndex) => {
        const entries =
          route.upstream === undefined
            ? [...credentials.values()].filter((entry) => entry.runtime === true && entry.provider === route.accounts)
            : [credentials.get(route.upstream)];
        return entries.map((entry) => {
          if (entry === undefined) throw new Error(`no credential ${route.upstream}`);
          const provider = entry.adapter.capabilities[model.type];
          if (provider === undefined) {
            throw new ConfigError(
              `models[${modelIndex}].routes[${routeIndex}].upstream`,
              `upstream "${entry.credential.id}" (${entry.provider}) cannot serve ${model.type} models`,
            );
          }
          return {
            credential: entry.credential,
            upstreamModel: route.model,
            weight: route.weight,
            priority: route.priority,
            maxInFlight: entry.maxInFlight,
            credentialHash: hash32(entry.credential.id),
            provider,
            native: entry.adapter.native ?? null,
            responses: entry.adapter.responses ?? null,
            statelessResponses: entry.adapter.statelessResponses ?? null,
            messages: entry.adapter.messages ?? null,
          };
        });
      });
      const [firstRoute] = model.routes;
      const firstProvider = firstRoute?.upstream === undefined ? firstRoute?.accounts : credentials.get(firstRoute.upstream)?.provider;
      return {
        id: model.id,
        ...(model.aliases === undefined ? {} : { aliases: model.aliases }),
        type: model.type,
        ownedBy: model.owned_by ?? firstProvider ?? 'switchyard',
        created: model.created ?? Math.floor(now / 1000),
        routes,
        totalWeight: routes.reduce((sum, route) => sum + route.weight, 0),
        strategy: model.strategy,
        ...(model.default_voice === undefined ? {} : { defaultVoice: model.default_voice }),
      };
    }),
  );
}
