import { Type, type Static } from '@sinclair/typebox';

export const MODEL_TYPES = ['chat', 'embedding', 'rerank', 'transcription', 'speech'] as const;
/** How a model's pool chooses a credential (docs/routing.md). */
export const ROUTING_STRATEGIES = ['weighted', 'least-busy', 'ordered'] as const;

/** A public model (`models[]`): its type, how its pool chooses, its routes and its price. */
export const RouteConfigSchema = Type.Object(
  {
    upstream: Type.Optional(
      Type.String({ minLength: 1, description: 'the `id` of the `upstreams[]` entry (credential) this route calls; a route names it or `accounts`' }),
    ),
    accounts: Type.Optional(
      Type.Literal('codex', {
        description:
          "instead of `upstream`: one route per ChatGPT account added at run time (`switchyard credentials add-codex`, `POST /admin/v1/credentials`), with this route's other keys (docs/native-passthrough.md)",
      }),
    ),
    model: Type.String({ minLength: 1, description: 'the name the upstream knows' }),
    weight: Type.Number({ exclusiveMinimum: 0, default: 1, description: 'splits traffic between the routes' }),
    priority: Type.Integer({ default: 0, description: 'orders an `ordered` pool: lower is tried first' }),
  },
  { additionalProperties: false },
);

export const ModelConfigSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, description: 'what callers pass as `model` and see in `/v1/models`' }),
    type: Type.Union(
      MODEL_TYPES.map((type) => Type.Literal(type)),
      { description: 'an endpoint refuses other types with 400' },
    ),
    aliases: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description:
          "other names callers may use for this model (Claude Code's own model names, say), each shown in `/v1/models`; a name ending in `*` takes every name that starts with the rest (the longest such prefix wins; an exact name or id always wins) (docs/model-aliases.md)",
      }),
    ),
    owned_by: Type.Optional(Type.String({ minLength: 1, documentedDefault: "first route's provider", description: 'shown in `/v1/models`' })),
    created: Type.Optional(
      Type.Integer({
        minimum: 0,
        documentedDefault: 'start time',
        description: 'unix seconds shown in `/v1/models` (an alias has no creation date of its own)',
      }),
    ),
    default_voice: Type.Optional(
      Type.String({ minLength: 1, documentedDefault: "provider's", description: 'speech models: the voice used when a request names none' }),
    ),
    strategy: Type.Union(
      ROUTING_STRATEGIES.map((strategy) => Type.Literal(strategy)),
      {
        default: 'weighted',
        description:
          'how a credential of the pool is chosen: `weighted` (weighted random over the available credentials), `least-busy` (fewest requests in flight, ties by weight), `ordered` (lowest `priority` first, the next only while it is unavailable) (docs/routing.md)',
      },
    ),
    routes: Type.Array(RouteConfigSchema, { minItems: 1, description: 'the pool, one route per credential' }),
    price: Type.Optional(
      Type.Object(
        {
          input_per_mtok: Type.Number({ minimum: 0, description: 'US dollars per million prompt tokens' }),
          output_per_mtok: Type.Number({ minimum: 0, description: 'US dollars per million completion tokens' }),
          cached_input_per_mtok: Type.Optional(
            Type.Number({ minimum: 0, documentedDefault: '`input_per_mtok`', description: 'US dollars per million prompt tokens read from the cache' }),
          ),
          cache_write_per_mtok: Type.Optional(
            Type.Number({
              minimum: 0,
              documentedDefault: '`input_per_mtok`',
              description: "US dollars per million prompt tokens written to the cache (Anthropic's cache writes: 1.25 times its input price for 5 minutes)",
            }),
          ),
        },
        {
          additionalProperties: false,
          description: "dollars per million tokens: each request's `cost_usd` in the log, dollar quotas, the usage API (docs/limits.md)",
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export type ModelConfig = Static<typeof ModelConfigSchema>;
export type RouteConfig = Static<typeof RouteConfigSchema>;
export type ModelType = (typeof MODEL_TYPES)[number];
export type RoutingStrategy = (typeof ROUTING_STRATEGIES)[number];
