import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { configurationTables, withTables, type ConfigurationSources } from '../../scripts/generate-configuration-docs.js';
import { ConfigSchema, ModelConfigSchema, PROVIDER_KINDS, UpstreamConfigSchema } from '../../src/config/config-schema.js';
import { DURATION_PATTERN } from '../../src/core/duration.js';
import { PROVIDER_LOADERS } from '../../src/providers/registry.js';

const pagePath = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url));

/** The sources as src/ has them (the script reads the same from dist/). */
async function sources(): Promise<ConfigurationSources> {
  const providers = [];
  for (const kind of PROVIDER_KINDS) {
    const loader = PROVIDER_LOADERS[kind];
    if (loader !== undefined) providers.push({ kind, keys: (await loader()).upstreamKeys });
  }
  return { config: ConfigSchema, upstream: UpstreamConfigSchema, model: ModelConfigSchema, providers, durationPattern: DURATION_PATTERN };
}

describe('docs/configuration.md', () => {
  it('holds the key tables the schemas make: run npm run docs:configuration when this fails', async () => {
    const page = readFileSync(pagePath, 'utf8');
    expect(withTables(page, configurationTables(await sources()))).toBe(page);
  });

  it('has a row for every key a section, an upstream entry, a provider and a model accept', async () => {
    const tables = configurationTables(await sources());
    const keysOf = (name: string) => [...(tables.get(name) ?? '').matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1]);
    for (const [section, schema] of Object.entries(ConfigSchema.properties)) {
      const properties = (schema as { properties?: Record<string, unknown> }).properties;
      if (properties !== undefined)
        for (const key of Object.keys(properties)) expect(keysOf('settings').some((row) => row?.startsWith(`${section}.${key}`))).toBe(true);
    }
    for (const key of Object.keys(UpstreamConfigSchema.properties))
      expect(keysOf('upstreams').some((row) => row === key || row?.startsWith(`${key}.`))).toBe(true);
    for (const { keys } of (await sources()).providers) for (const key of Object.keys(keys)) expect(keysOf('upstreams')).toContain(key);
    for (const key of Object.keys(ModelConfigSchema.properties)) expect(keysOf('models').some((row) => row === key || row === `${key}[]`)).toBe(true);
  });

  it('refuses a key whose schema does not say what it does', async () => {
    const undescribed = { ...(await sources()), providers: [{ kind: 'openai', keys: { new_key: Type.Boolean() } }] };
    expect(() => configurationTables(undescribed)).toThrow('configuration key new_key has no description in its schema');
  });

  it('refuses a page that lost a marker, so a table cannot silently stop being generated', async () => {
    const page = readFileSync(pagePath, 'utf8').replace('<!-- generated: models', '<!-- models');
    const tables = configurationTables(await sources());
    expect(() => withTables(page, tables)).toThrow(/no marker for the table\(s\) models/);
  });
});
