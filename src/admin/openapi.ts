import { readFileSync } from 'node:fs';
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { ERROR_CODES } from '../errors/index.js';
import type { AdminRoute } from './admin-route.js';

type Json = Record<string, unknown>;

export const OPENAPI_PATH = '/admin/v1/openapi.json';

const TAGS: Record<string, string> = {
  teams: 'Teams: what tokens belong to, with their limits and quotas',
  projects: "A team's projects, with their limits and quotas",
  tokens: 'API tokens: created with their secret shown once, changed, revoked',
  credentials: 'Upstream credentials and the accounts added at run time',
  requests: 'The request log',
  sessions: 'Sessions: their turns in order',
  usage: 'Usage totals',
  meta: 'This document',
};

/** The TypeBox schema as plain JSON Schema (TypeBox marks its schemas with symbol keys, which JSON drops). */
const plain = (schema: TSchema): Json => JSON.parse(JSON.stringify(schema)) as Json;

const ERROR_SCHEMA: Json = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['message', 'type', 'code', 'param'],
      properties: {
        message: { type: 'string' },
        type: { type: 'string', description: "OpenAI's error type, so the SDKs' error classes match" },
        code: { type: 'string', enum: Object.keys(ERROR_CODES), description: 'stable: clients may key on it' },
        param: { type: ['string', 'null'], description: 'the field at fault, when one is' },
      },
    },
  },
};

const VALIDATION_ERROR_SCHEMA: Json = {
  allOf: [{ $ref: '#/components/schemas/Error' }],
  type: 'object',
  required: ['error', 'detail'],
  properties: {
    detail: {
      type: 'array',
      items: {
        type: 'object',
        required: ['loc', 'msg', 'type'],
        properties: { loc: { type: 'array', items: { type: ['string', 'integer'] } }, msg: { type: 'string' }, type: { type: 'string' } },
      },
    },
  },
};

const errorResponse = (description: string, schema = 'Error'): Json => ({
  description,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
});

const RESPONSES: Record<string, Json> = {
  BadRequest: errorResponse('The body is not JSON, or not a JSON object (invalid_json, invalid_body, unsupported_media_type)'),
  Unauthorized: errorResponse('No token, or a malformed, unknown, revoked or expired one'),
  Forbidden: errorResponse('The token lacks the admin scope (insufficient_scope)'),
  NotFound: errorResponse('The path names a record that does not exist'),
  ValidationFailed: errorResponse('A field fails validation; param and detail name it (validation_error)', 'ValidationError'),
  Error: errorResponse('Any other error (409 conflicts, 5xx), with its stable code'),
};

function parameters(schema: TObject | undefined, location: 'path' | 'query'): Json[] {
  if (schema === undefined) return [];
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, property]) => {
    const { description, ...rest } = plain(property);
    return { name, in: location, required: location === 'path' || required.has(name), ...(description === undefined ? {} : { description }), schema: rest };
  });
}

function operation(route: AdminRoute): Json {
  const responses: Json = {
    [String(route.status ?? 200)]: { description: route.summary, content: { 'application/json': { schema: plain(route.response) } } },
  };
  if (route.body !== undefined) responses['400'] = { $ref: '#/components/responses/BadRequest' };
  responses['401'] = { $ref: '#/components/responses/Unauthorized' };
  responses['403'] = { $ref: '#/components/responses/Forbidden' };
  if (route.params !== undefined) responses['404'] = { $ref: '#/components/responses/NotFound' };
  if (route.params !== undefined || route.query !== undefined || route.body !== undefined)
    responses['422'] = { $ref: '#/components/responses/ValidationFailed' };
  responses['default'] = { $ref: '#/components/responses/Error' };
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    ...(route.params === undefined && route.query === undefined
      ? {}
      : { parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')] }),
    ...(route.body === undefined ? {} : { requestBody: { required: true, content: { 'application/json': { schema: plain(route.body) } } } }),
    responses,
  };
}

/**
 * The OpenAPI 3.1 document of the admin API, made from the route table: the same TypeBox
 * schemas validate the requests (http/routes/admin-routes.ts), so the two cannot disagree.
 * Every route needs a token with scope `admin` (the bearer scheme).
 */
export function openApiDocument(routes: readonly AdminRoute[], version: string): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const path = (paths[route.path] ??= {});
    path[route.method.toLowerCase()] = operation(route);
  }
  const tags = [...new Set(routes.map((route) => route.tag))].map((name) => ({ name, ...(TAGS[name] === undefined ? {} : { description: TAGS[name] }) }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchyard admin API',
      version,
      description: 'Teams, projects, tokens, upstream credentials and the request log of a Switchyard gateway. Errors have the same shape as /v1 answers.',
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    tags,
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'a gateway token with the admin scope' } },
      schemas: { Error: ERROR_SCHEMA, ValidationError: VALIDATION_ERROR_SCHEMA },
      responses: RESPONSES,
    },
  };
}

/** The package's version, from the package.json two folders up (from src/admin and dist/admin alike). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** The routes with `GET /admin/v1/openapi.json` added, which answers their document (made once, on first asking). */
export function withOpenApi(routes: readonly AdminRoute[]): AdminRoute[] {
  let document: Json | null = null;
  const all: AdminRoute[] = [...routes];
  all.push({
    method: 'GET',
    path: OPENAPI_PATH,
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI 3.1 document',
    tag: 'meta',
    response: Type.Object({}, { additionalProperties: true, description: 'an OpenAPI 3.1 document' }),
    handle: () => (document ??= openApiDocument(all, packageVersion())),
  });
  return all;
}
