// Writes the key tables of docs/configuration.md from the config schema (src/config/) and each
// provider's own upstream keys (src/providers/registry.ts), so the reference cannot drift from what
// the gateway accepts. Only the tables between `<!-- generated: NAME … -->` and
// `<!-- end generated -->` are rewritten; the prose around them is the page's own.
//
//   npm run docs:configuration            # build, then rewrite the tables
//   npm run docs:configuration -- --check # exit 1 when the committed tables are stale
//
// Run by Node itself (type stripping): it reads the schemas from the build in dist/.
// test/packaging/configuration-docs.test.ts checks the committed page against src/.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { TObject, TProperties, TSchema } from '@sinclair/typebox';
import type * as ConfigSchemaModule from '../src/config/config-schema.js';
import type * as DurationModule from '../src/core/duration.js';
import type * as RegistryModule from '../src/providers/registry.js';

/** What the tables are made of: the whole config, and each provider kind's own upstream keys. */
export interface ConfigurationSources {
  config: TObject;
  upstream: TObject;
  model: TObject;
  providers: ReadonlyArray<{ kind: string; keys: TProperties }>;
  /** The pattern of a duration (`90s`, `5m`), named as such in the type column. */
  durationPattern: string;
}

interface Row {
  key: string;
  schema: TSchema;
  required: boolean;
  /** Before the description: which providers have the key. */
  owners?: readonly string[];
}

/** A line across the table: the rows below it are of another kind. */
interface Heading {
  heading: string;
}

const HEADER = ['| key | type | default | description |', '|---|---|---|---|'];
const MEBIBYTE = 1024 * 1024;

/** The three tables of docs/configuration.md, by the name their marker gives. */
export function configurationTables(sources: ConfigurationSources): Map<string, string> {
  const settings = rows(sources.config, '', false);
  const upstreams = [...rows(sources.upstream, '', true), { heading: "*a provider's own*" }, ...providerRows(sources.providers)];
  const models = rows(sources.model, '', true);
  return new Map([
    ['settings', table(settings, sources.durationPattern)],
    ['upstreams', table(upstreams, sources.durationPattern)],
    ['models', table(models, sources.durationPattern)],
  ]);
}

/** `markdown` with each generated table replaced; a marker without a table of that name, or a table without its marker, is refused. */
export function withTables(markdown: string, tables: ReadonlyMap<string, string>): string {
  const written = new Set<string>();
  const result = markdown.replace(
    /(<!-- generated: ([a-z-]+)[^>]*-->\n)[\s\S]*?(<!-- end generated -->)/g,
    (_whole, open: string, name: string, close: string) => {
      const generated = tables.get(name);
      if (generated === undefined) throw new Error(`docs/configuration.md: no table is generated under the name "${name}"`);
      written.add(name);
      return `${open}${generated}\n${close}`;
    },
  );
  const missing = [...tables.keys()].filter((name) => !written.has(name));
  if (missing.length > 0) throw new Error(`docs/configuration.md: no marker for the table(s) ${missing.join(', ')}`);
  return result;
}

/** Each leaf of `object` as a row; an object or list of entries that describes itself gets a row of its own before its keys. */
function rows(object: TObject, prefix: string, expandLists: boolean): Row[] {
  const required = new Set(object.required ?? []);
  return Object.entries(object.properties).flatMap(([name, schema]): Row[] => {
    const key = `${prefix}${name}`;
    const own: Row = { key, schema, required: required.has(name) };
    if (isObject(schema)) return [...(schema.description === undefined ? [] : [own]), ...rows(schema, `${key}.`, expandLists)];
    const items = schema['items'] as TSchema | undefined;
    if (schema['type'] === 'array' && items !== undefined && isObject(items)) {
      const list: Row = { ...own, key: `${key}[]` };
      return expandLists ? [list, ...rows(items, `${key}[].`, expandLists)] : [list];
    }
    return [own];
  });
}

/** A provider's own keys, one row per key schema with the kinds that share it, in the order the kinds are listed. */
function providerRows(providers: ConfigurationSources['providers']): Row[] {
  const byKey = new Map<TSchema, Row & { owners: string[] }>();
  for (const { kind, keys } of providers) {
    for (const [key, schema] of Object.entries(keys)) {
      const row = byKey.get(schema) ?? { key, schema, required: false, owners: [] };
      row.owners.push(kind);
      byKey.set(schema, row);
    }
  }
  return [...byKey.values()];
}

function table(rowsOfTable: ReadonlyArray<Row | Heading>, durationPattern: string): string {
  const lines = rowsOfTable.map((row) => {
    if ('heading' in row) return `| ${row.heading} | | | |`;
    const key = `\`${row.key}\``;
    const owners = row.owners === undefined ? '' : `${row.owners.map((kind) => `\`${kind}\``).join(', ')}: `;
    // A key the reference cannot explain is one its users cannot use: its schema must say what it does.
    if (row.schema.description === undefined) throw new Error(`configuration key ${row.key} has no description in its schema`);
    return `| ${key} | ${typeOf(row.schema, durationPattern)} | ${defaultOf(row)} | ${cell(owners + linked(row.schema.description))} |`;
  });
  return [...HEADER, ...lines].join('\n');
}

function typeOf(schema: TSchema, durationPattern: string): string {
  const members = schema['anyOf'] as TSchema[] | undefined;
  if (members !== undefined) return members.map((member) => typeOf(member, durationPattern)).join(', ');
  if (schema['const'] !== undefined) return `\`${String(schema['const'])}\``;
  switch (schema['type']) {
    case 'string':
      return schema['pattern'] === durationPattern ? 'duration' : 'string';
    case 'integer':
    case 'number':
      return `${schema['type']}${bounds(schema)}`;
    case 'array': {
      const items = schema['items'] as TSchema;
      const least = schema['minItems'] === undefined ? '' : `, at least ${String(schema['minItems'])}`;
      return isObject(items) ? `list${least}` : `list of ${typeOf(items, durationPattern)}s${least}`;
    }
    case 'object':
      return schema['patternProperties'] === undefined ? 'object' : 'map of strings';
    default:
      return String(schema['type']);
  }
}

function bounds(schema: TSchema): string {
  const minimum = schema['minimum'] as number | undefined;
  const maximum = schema['maximum'] as number | undefined;
  if (minimum !== undefined && maximum !== undefined) return ` ${minimum}–${maximum}`;
  if (minimum !== undefined) return ` ≥ ${minimum}`;
  if (schema['exclusiveMinimum'] !== undefined) return ` > ${String(schema['exclusiveMinimum'])}`;
  return '';
}

/** The schema's `default`, or its `documentedDefault` where what applies is not one value (the provider's, the start time). */
function defaultOf(row: Row): string {
  const documented = row.schema['documentedDefault'] as string | undefined;
  if (documented !== undefined) return cell(documented);
  const value: unknown = row.schema.default;
  if (value === undefined) return row.required ? 'required' : 'none';
  const shown = `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
  if (typeof value === 'number' && /_bytes(_|$)/.test(row.key) && value % MEBIBYTE === 0) return `${shown} (${value / MEBIBYTE} MiB)`;
  return shown;
}

/** `docs/routing.md#anchor` in a description becomes a link from this page. */
function linked(text: string): string {
  return text.replace(/\bdocs\/([a-z0-9-]+\.md)(#[a-z0-9-]+)?/g, (_whole, file: string, anchor: string | undefined) => `[${file}](${file}${anchor ?? ''})`);
}

function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function isObject(schema: TSchema): schema is TObject {
  return schema['type'] === 'object' && schema['properties'] !== undefined;
}

/** The sources as the build in dist/ has them (see the header: Node runs this file without a bundler). */
async function builtSources(root: string): Promise<ConfigurationSources> {
  const load = async (path: string): Promise<unknown> => import(pathToFileURL(join(root, 'dist', path)).href);
  const config = (await load('config/config-schema.js')) as typeof ConfigSchemaModule;
  const registry = (await load('providers/registry.js')) as typeof RegistryModule;
  const duration = (await load('core/duration.js')) as typeof DurationModule;
  const providers = [];
  for (const kind of config.PROVIDER_KINDS) {
    const loader = registry.PROVIDER_LOADERS[kind];
    if (loader !== undefined) providers.push({ kind, keys: (await loader()).upstreamKeys });
  }
  return {
    config: config.ConfigSchema,
    upstream: config.UpstreamConfigSchema,
    model: config.ModelConfigSchema,
    providers,
    durationPattern: duration.DURATION_PATTERN,
  };
}

async function main(): Promise<void> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const path = join(root, 'docs', 'configuration.md');
  const current = readFileSync(path, 'utf8');
  const next = withTables(current, configurationTables(await builtSources(root)));
  if (process.argv.includes('--check')) {
    if (next !== current) {
      process.stderr.write('docs/configuration.md is stale: run npm run docs:configuration\n');
      process.exitCode = 1;
    }
    return;
  }
  if (next !== current) writeFileSync(path, next);
  process.stdout.write(next === current ? 'docs/configuration.md is up to date\n' : 'docs/configuration.md: tables rewritten\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
