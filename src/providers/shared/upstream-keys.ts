import { Type, type Static, type TProperties } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { COMMON_UPSTREAM_KEYS, ConfigError, type EndpointConfig, type UpstreamConfig } from '../../config/index.js';

/** The key of every provider that embeds: how many inputs one upstream call may take. */
export const EMBEDDING_UPSTREAM_KEYS = {
  max_embedding_inputs: Type.Optional(
    Type.Integer({
      minimum: 1,
      documentedDefault: "provider's (OpenAI: 2048)",
      description: 'inputs per upstream embeddings call; larger requests are split into batches',
    }),
  ),
};

/**
 * Checks an upstream entry's provider-specific keys against the provider's own schema: a key that
 * is neither common nor the provider's is refused (a typo, or another provider's key), and so is a
 * value of the wrong type. The ConfigError names the bare key; the composition root adds which
 * entry. Values from `${VAR}` arrive as text and are converted as the loader converts its own.
 */
export function checkUpstreamKeys(upstream: UpstreamConfig, properties: TProperties): void {
  const own = pickOwnKeys(upstream, properties, true);
  const schema = Type.Object(properties, { additionalProperties: false });
  const error = Value.Errors(schema, Value.Convert(schema, own)).First();
  if (error === undefined) return;
  const key = error.path.split('/').filter(Boolean).join('.');
  throw new ConfigError(key, error.value === undefined ? 'is required' : `${error.message.toLowerCase()}, got ${JSON.stringify(error.value)}`);
}

/**
 * The keys of `properties` in an entry that `checkUpstreamKeys` accepted, typed by their schema.
 * Others are ignored: an adapter built on another (Azure's on OpenAI's) reads only what it needs.
 */
export function readUpstreamKeys<Properties extends TProperties>(
  upstream: UpstreamConfig | EndpointConfig,
  properties: Properties,
): Static<ReturnType<typeof Type.Object<Properties>>> {
  return Value.Convert(Type.Object(properties), pickOwnKeys(upstream, properties, false)) as Static<ReturnType<typeof Type.Object<Properties>>>;
}

function pickOwnKeys(upstream: UpstreamConfig | EndpointConfig, properties: TProperties, strict: boolean): Record<string, unknown> {
  const own: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(upstream)) {
    if (COMMON_UPSTREAM_KEYS.has(key)) continue;
    if (!Object.hasOwn(properties, key)) {
      if (!strict) continue;
      const accepted = Object.keys(properties);
      throw new ConfigError(
        key,
        `unknown key for provider ${upstream.provider} (${accepted.length === 0 ? 'it has no keys of its own' : `its own keys: ${accepted.join(', ')}`})`,
      );
    }
    own[key] = value;
  }
  return own;
}
