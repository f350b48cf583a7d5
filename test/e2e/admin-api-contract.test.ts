import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SCOPES } from '../../src/access/index.js';
import type { AdminRoute } from '../../src/admin/index.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

/**
 * What every admin route owes whatever it does, checked from the gateway's own route table (so
 * a route added later is checked too): no token is 401, a token without `admin` is 403, and the
 * OpenAPI document it serves is valid OpenAPI 3.1 and lists every route.
 */
let running: TestGateway;
let adminToken: string;
/** Every scope but admin: what a busy non-admin token has. */
let userToken: string;

beforeAll(async () => {
  running = await startTestGateway({ upstreams: [], models: [] });
  adminToken = (await running.gateway.tokens.create({ team: 'ops', scopes: ['admin'] })).secret;
  userToken = (await running.gateway.tokens.create({ team: 'users', scopes: [...DEFAULT_SCOPES] })).secret;
});
afterAll(async () => {
  await running?.close();
});

/** The route's path with every `{param}` filled in. */
const concrete = (route: AdminRoute) => route.path.replace(/\{[^}]+\}/g, 'some-id');

function call(route: AdminRoute, token: string | null): Promise<Response> {
  return fetch(`${running.gateway.url}${concrete(route)}`, {
    method: route.method,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(route.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(route.body === undefined ? {} : { body: '{}' }),
  });
}

describe('every admin route', () => {
  it('has a table of the routes this issue adds, each with a unique operationId', () => {
    const routes = running.gateway.adminRoutes;
    const names = routes.map((route) => `${route.method} ${route.path}`);
    for (const expected of [
      'GET /admin/v1/teams',
      'POST /admin/v1/teams',
      'GET /admin/v1/teams/{id}',
      'PATCH /admin/v1/teams/{id}',
      'DELETE /admin/v1/teams/{id}',
      'GET /admin/v1/teams/{team}/projects',
      'POST /admin/v1/teams/{team}/projects',
      'GET /admin/v1/teams/{team}/projects/{id}',
      'PATCH /admin/v1/teams/{team}/projects/{id}',
      'DELETE /admin/v1/teams/{team}/projects/{id}',
      'GET /admin/v1/tokens',
      'POST /admin/v1/tokens',
      'GET /admin/v1/tokens/{id}',
      'PATCH /admin/v1/tokens/{id}',
      'POST /admin/v1/tokens/{id}/revoke',
      'GET /admin/v1/credentials',
      'GET /admin/v1/credentials/{id}',
      'POST /admin/v1/credentials',
      'DELETE /admin/v1/credentials/{id}',
      'GET /admin/v1/accounts',
      'GET /admin/v1/openapi.json',
    ]) {
      expect(names).toContain(expected);
    }
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(routes.map((route) => route.operationId)).size).toBe(routes.length);
    for (const route of routes) expect(route.path.startsWith('/admin/v1/'), route.path).toBe(true);
  });

  it('answers 401 without a token and 403 to a token without the admin scope, before reading anything', async () => {
    const wrong: string[] = [];
    for (const route of running.gateway.adminRoutes) {
      const anonymous = await call(route, null);
      const anonymousBody = (await anonymous.json()) as { error: { code: string } };
      if (anonymous.status !== 401 || anonymousBody.error.code !== 'missing_api_key')
        wrong.push(`${route.method} ${route.path} without a token: ${anonymous.status} ${anonymousBody.error.code}`);
      const user = await call(route, userToken);
      const userBody = (await user.json()) as { error: { code: string } };
      if (user.status !== 403 || userBody.error.code !== 'insufficient_scope')
        wrong.push(`${route.method} ${route.path} without admin: ${user.status} ${userBody.error.code}`);
      // And the admin token gets past authentication (whatever the made-up id then gives).
      const admin = await call(route, adminToken);
      await admin.arrayBuffer();
      if (admin.status === 401 || admin.status === 403) wrong.push(`${route.method} ${route.path} with admin: ${admin.status}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('GET /admin/v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document listing every route of the table with its operationId', async () => {
    const answer = await fetch(`${running.gateway.url}/admin/v1/openapi.json`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(answer.status).toBe(200);
    const document = (await answer.json()) as {
      openapi: string;
      paths: Record<string, Record<string, { operationId: string; tags: string[]; responses: Record<string, unknown> }>>;
      components: { securitySchemes: Record<string, unknown> };
      security: unknown[];
    };
    expect(document.openapi).toBe('3.1.0');
    // validate() dereferences in place: give it a copy.
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
    for (const route of running.gateway.adminRoutes) {
      const operation = document.paths[route.path]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      expect(operation?.operationId).toBe(route.operationId);
      expect(operation?.tags).toEqual([route.tag]);
      expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining([String(route.status ?? 200), '401', '403', 'default']));
      // Swagger Parser does not check 3.1 path templates against their parameters: this does.
      const templated = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      const declared = ((operation as { parameters?: Array<{ name: string; in: string; required: boolean }> } | undefined)?.parameters ?? []).filter(
        (parameter) => parameter.in === 'path',
      );
      expect(declared.map((parameter) => parameter.name).sort()).toEqual(templated.sort());
      expect(declared.every((parameter) => parameter.required)).toBe(true);
    }
    const operations = Object.values(document.paths).flatMap((methods) => Object.keys(methods));
    expect(operations).toHaveLength(running.gateway.adminRoutes.length);
    expect(document.components.securitySchemes).toEqual({ bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }) });
    expect(document.security).toEqual([{ bearerAuth: [] }]);
  });
});
