import { SCOPES } from '../src/access/scopes.js';
import { credentialRoutes, openApiDocument, requestRoutes, teamRoutes, tokenRoutes, withOpenApi } from '../src/admin/index.js';

/**
 * web/src/api/types.ts, written from the admin API's OpenAPI document (src/admin/openapi.ts, made
 * from the route table's TypeBox schemas): the console's wire types cannot drift from what the
 * server validates and answers. `npm run generate:console-types` writes the file;
 * test/packaging/console-types.test.ts fails when the committed copy differs from what this makes.
 */

type Json = { [key: string]: unknown };

/** The path of the output, from the repository's root. */
export const CONSOLE_TYPES_PATH = 'web/src/api/types.ts';

/** A service the route table is built over: making the document reads only the routes' schemas, never calls one. */
function notCalled<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get: (_target, property) => {
      throw new Error(`${name}.${String(property)} was called while the OpenAPI document was made from the route table`);
    },
  });
}

/** The document as the server answers `GET /admin/v1/openapi.json` (the version aside). */
function adminDocument(): Json {
  const routes = withOpenApi([
    ...teamRoutes(notCalled('TeamService')),
    ...tokenRoutes(notCalled('TokenService'), notCalled('lastUsed')),
    ...credentialRoutes(notCalled('CredentialAdmin'), notCalled('UpstreamAccounts')),
    ...requestRoutes(notCalled('RequestQueries')),
  ]);
  return openApiDocument(routes, '0');
}

/** What a JSON pointer (`/paths/~1admin~1v1~1teams/get`) names in the document. */
function at(document: Json, pointer: string): Json {
  let value: unknown = document;
  for (const part of pointer.split('/').slice(1)) {
    const key = part.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof value !== 'object' || value === null || !(key in value)) throw new Error(`the admin API's OpenAPI document has nothing at ${pointer}`);
    value = (value as Json)[key];
  }
  return value as Json;
}

const response = (path: string, method: string, status = 200) =>
  `/paths/${path.replaceAll('/', '~1')}/${method}/responses/${status}/content/application~1json/schema`;
const requestBody = (path: string, method: string) => `/paths/${path.replaceAll('/', '~1')}/${method}/requestBody/content/application~1json/schema`;

/**
 * The named types, each a schema of the document. A schema equal to a named one is written as its
 * name wherever it appears (Limits in Team, Attempt in RequestView…); the order is the file's.
 */
const NAMED: readonly { name: string; pointer: string; about: string }[] = [
  { name: 'ErrorBody', pointer: '/components/schemas/Error', about: 'Every error answer (the /v1 shape).' },
  { name: 'Limits', pointer: `${response('/admin/v1/teams/{id}', 'get')}/properties/limits`, about: "A token's, project's or team's rate limits and quotas." },
  {
    name: 'LimitChanges',
    pointer: `${requestBody('/admin/v1/teams/{id}', 'patch')}/properties/limits`,
    about: 'A JSON merge patch of limits: null removes one.',
  },
  { name: 'Token', pointer: response('/admin/v1/tokens/{id}', 'get'), about: 'A token: never its secret or its hash.' },
  { name: 'CreatedToken', pointer: response('/admin/v1/tokens', 'post', 201), about: 'The answer to a create: the token with its secret, this once.' },
  { name: 'NewToken', pointer: requestBody('/admin/v1/tokens', 'post'), about: '`POST /admin/v1/tokens`.' },
  { name: 'TokenChanges', pointer: requestBody('/admin/v1/tokens/{id}', 'patch'), about: '`PATCH /admin/v1/tokens/{id}`: absent fields are kept.' },
  { name: 'Team', pointer: response('/admin/v1/teams/{id}', 'get'), about: 'A team.' },
  { name: 'Project', pointer: response('/admin/v1/teams/{team}/projects/{id}', 'get'), about: "A team's project." },
  { name: 'Attempt', pointer: `${response('/admin/v1/requests/{id}', 'get')}/properties/attempts/items`, about: 'One upstream attempt of a request.' },
  { name: 'RequestView', pointer: response('/admin/v1/requests/{id}', 'get'), about: 'A request of the log, with its attempts.' },
  { name: 'SessionView', pointer: response('/admin/v1/sessions/{id}', 'get'), about: "A session's turns, oldest first." },
  { name: 'Credential', pointer: response('/admin/v1/credentials/{id}', 'get'), about: 'An upstream credential and its state.' },
  { name: 'UsageBucket', pointer: `${response('/admin/v1/usage', 'get')}/properties/bucket`, about: 'UTC hours or UTC days.' },
  { name: 'UsageGroupBy', pointer: `${response('/admin/v1/usage', 'get')}/properties/group_by`, about: 'What each usage row totals.' },
  { name: 'UsageRow', pointer: `${response('/admin/v1/usage', 'get')}/properties/data/items`, about: 'One bucket and group of usage totals.' },
  { name: 'UsageView', pointer: response('/admin/v1/usage', 'get'), about: 'Usage totals per bucket and group.' },
];

/** The list envelope: `ListPage<T>` is the teams list with its item made the parameter. */
const LIST_POINTER = response('/admin/v1/teams', 'get');

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const literal = (value: unknown): string => (typeof value === 'string' ? `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'` : JSON.stringify(value));
const comment = (text: unknown, indent: string): string =>
  typeof text === 'string' && text !== '' ? `${indent}/** ${text.replaceAll('*/', '*\\/')} */\n` : '';

class Writer {
  private readonly names = new Map<string, string>();

  constructor(private readonly document: Json) {}

  /** `schema` (as JSON) is written as `name` wherever it appears outside its own declaration. */
  name(schema: unknown, name: string): void {
    this.names.set(JSON.stringify(schema), name);
  }

  /** The TypeScript type of a JSON schema; `indent` is the indentation of the line it starts on. */
  type(schema: Json, indent: string, own?: string): string {
    const named = this.names.get(JSON.stringify(schema));
    if (named !== undefined && named !== own) return named;
    if ('const' in schema) return literal(schema['const']);
    if (Array.isArray(schema['enum'])) return schema['enum'].map(literal).join(' | ');
    if (Array.isArray(schema['anyOf'])) return this.union((schema['anyOf'] as Json[]).map((member) => this.type(member, indent)));
    if (Array.isArray(schema['allOf'])) return (schema['allOf'] as Json[]).map((member) => this.type(member, indent)).join(' & ');
    if (typeof schema['$ref'] === 'string') return this.type(at(this.document, schema['$ref'].replace(/^#/, '')), indent);
    const kinds = Array.isArray(schema['type']) ? (schema['type'] as string[]) : [schema['type'] as string | undefined];
    return this.union(kinds.map((kind) => this.kind(kind, schema, indent)));
  }

  private union(members: string[]): string {
    return [...new Set(members)].join(' | ');
  }

  private kind(kind: string | undefined, schema: Json, indent: string): string {
    switch (kind) {
      case 'string':
        return 'string';
      case 'integer':
      case 'number':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array': {
        const item = this.type(schema['items'] as Json, indent);
        return /[|&]/.test(item) ? `(${item})[]` : `${item}[]`;
      }
      case 'object':
        return this.object(schema, indent);
      default:
        return 'unknown';
    }
  }

  /** An object type's body, `{ … }`, one member a line. */
  object(schema: Json, indent: string): string {
    const properties = (schema['properties'] ?? {}) as Record<string, Json>;
    const required = new Set((schema['required'] ?? []) as string[]);
    const inner = `${indent}  `;
    const members = Object.entries(properties).map(([key, property]) => {
      const name = IDENTIFIER.test(key) ? key : literal(key);
      return `${comment(property['description'], inner)}${inner}${name}${required.has(key) ? '' : '?'}: ${this.type(property, inner)};\n`;
    });
    const rest = schema['patternProperties'] ?? schema['additionalProperties'];
    if (typeof rest === 'object' && rest !== null) {
      const values = Object.values(rest as Json);
      const value = 'type' in (rest as Json) || 'anyOf' in (rest as Json) ? (rest as Json) : (values[0] as Json);
      members.push(`${inner}[key: string]: ${this.type(value, inner)};\n`);
    } else if (rest === true) members.push(`${inner}[key: string]: unknown;\n`);
    if (members.length === 0) return 'Record<string, never>';
    return `{\n${members.join('')}${indent}}`;
  }
}

/** The file's text. */
export function consoleTypesSource(): string {
  const document = adminDocument();
  const writer = new Writer(document);
  const schemas = NAMED.map((entry) => ({ ...entry, schema: at(document, entry.pointer) }));
  for (const { name, schema } of schemas) writer.name(schema, name);
  const list = at(document, LIST_POINTER);
  const listWithParameter: Json = { ...list, properties: { ...(list['properties'] as Json), data: { type: 'array', items: { $parameter: 'T' } } } };
  writer.name({ $parameter: 'T' }, 'T');

  const limits = at(document, NAMED.find((entry) => entry.name === 'Limits')?.pointer ?? '');
  const limitNames = Object.keys(limits['properties'] as Json);
  const declarations = schemas.map(({ name, schema, about }) => {
    const body = writer.type(schema, '', name);
    const isObject = body.startsWith('{\n');
    return `${comment(about, '')}${isObject ? `export interface ${name} ${body}` : `export type ${name} = ${body};`}\n`;
  });
  return [
    "// Generated by `npm run generate:console-types` (scripts/console-types.ts) from the admin API's",
    "// OpenAPI document (src/admin/openapi.ts, made from the route table's TypeBox schemas): do not edit.",
    '// test/packaging/console-types.test.ts fails when this copy is stale.',
    '',
    '/** The names of the limits, in the wire order. */',
    `export const LIMIT_NAMES = [${limitNames.map(literal).join(', ')}] as const;`,
    'export type LimitName = (typeof LIMIT_NAMES)[number];',
    '',
    '/** The token scopes (src/access/scopes.ts: the document types a scope as a string). */',
    `export const SCOPES = [${SCOPES.map(literal).join(', ')}] as const;`,
    '',
    '/** The envelope of every admin list. */',
    `export interface ListPage<T> ${writer.object(listWithParameter, '')}`,
    '',
    declarations.join('\n'),
  ].join('\n');
}
