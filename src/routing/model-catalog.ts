import { ConfigError, type ModelConfig, type ModelType, type UpstreamConfig } from '../config/index.js';
import type { CapabilityOf, ProviderAdapter } from '../providers/provider-adapter.js';

/** One credential able to serve a model of type `Type`, and what to call on it. */
export interface Route<Type extends ModelType = ModelType> {
  readonly upstreamId: string;
  /** The model name the upstream knows, which may differ from the public id. */
  readonly upstreamModel: string;
  readonly weight: number;
  /** The adapter's capability for this type: a chat route can only be asked to chat. */
  readonly provider: CapabilityOf[Type];
}

export interface CatalogModel<Type extends ModelType = ModelType> {
  readonly id: string;
  readonly type: Type;
  readonly ownedBy: string;
  readonly created: number;
  readonly routes: readonly Route<Type>[];
  readonly totalWeight: number;
  /** Speech models: the voice when a request names none (else the provider's default). */
  readonly defaultVoice?: string;
}

/** The models callers see, each with the pool of upstream routes that serve it. */
export class ModelCatalog {
  private readonly models: Map<string, CatalogModel>;

  constructor(models: readonly CatalogModel[]) {
    this.models = new Map(models.map((model) => [model.id, model]));
  }

  get(id: string): CatalogModel | undefined {
    return this.models.get(id);
  }

  all(): IterableIterator<CatalogModel> {
    return this.models.values();
  }
}

/**
 * Builds the catalog from configuration. `created` defaults to the time the catalog was built,
 * since a configured alias has no creation date of its own.
 */
export function buildCatalog(
  models: readonly ModelConfig[],
  upstreams: readonly UpstreamConfig[],
  adapters: ReadonlyMap<string, ProviderAdapter>,
  now: number = Date.now(),
): ModelCatalog {
  const providerOf = new Map(upstreams.map((upstream) => [upstream.id, upstream.provider]));
  return new ModelCatalog(
    models.map((model, modelIndex) => {
      const routes = model.routes.map((route, routeIndex) => {
        const adapter = adapters.get(route.upstream);
        if (adapter === undefined) throw new Error(`no adapter for upstream ${route.upstream}`);
        const provider = adapter.capabilities[model.type];
        if (provider === undefined) {
          throw new ConfigError(
            `models[${modelIndex}].routes[${routeIndex}].upstream`,
            `upstream "${route.upstream}" (${providerOf.get(route.upstream) ?? '?'}) cannot serve ${model.type} models`,
          );
        }
        return { upstreamId: route.upstream, upstreamModel: route.model, weight: route.weight, provider };
      });
      const firstUpstream = model.routes[0]?.upstream ?? '';
      return {
        id: model.id,
        type: model.type,
        ownedBy: model.owned_by ?? providerOf.get(firstUpstream) ?? 'switchyard',
        created: model.created ?? Math.floor(now / 1000),
        routes,
        totalWeight: routes.reduce((sum, route) => sum + route.weight, 0),
        ...(model.default_voice === undefined ? {} : { defaultVoice: model.default_voice }),
      };
    }),
  );
}
