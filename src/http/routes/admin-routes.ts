import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import type { FastifyInstance } from 'fastify';
import type { AdminRoute } from '../../admin/index.js';
import { toIssue, validationError } from '../../api/validation-issues.js';
import { GatewayError } from '../../errors/index.js';

type Location = 'path' | 'query' | 'body';

/** A compiled check of one part of a request; its 422 names the field where it sits (`['query', 'limit']`). */
function checker(schema: TSchema | undefined, location: Location): ((value: unknown) => unknown) | null {
  if (schema === undefined) return null;
  const check: TypeCheck<TSchema> = TypeCompiler.Compile(schema);
  return (value) => {
    // Path and query values arrive as text: `?limit=5` is checked as the integer 5.
    const candidate = location === 'body' ? value : Value.Convert(schema, value);
    if (check.Check(candidate)) return candidate;
    throw validationError(
      [...check.Errors(candidate)].slice(0, 20).map((error) => {
        const issue = toIssue(error);
        return { ...issue, loc: [location, ...issue.loc.slice(1)] };
      }),
    );
  };
}

/** `/admin/v1/teams/{id}` → `/admin/v1/teams/:id` */
export function fastifyPath(path: string): string {
  return path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}

/**
 * Registers the admin API's route table: each route needs a token with scope `admin` (the
 * pipeline's authentication stage), its params, query and body are checked by its own schemas
 * (those the OpenAPI document shows), and it answers with its status. Errors take the /v1 path:
 * the app's one error handler.
 */
export function registerAdminRoutes(app: FastifyInstance, routes: readonly AdminRoute[]): void {
  for (const route of routes) {
    const params = checker(route.params, 'path');
    const query = checker(route.query, 'query');
    const body = checker(route.body, 'body');
    app.route({
      method: route.method,
      url: fastifyPath(route.path),
      config: { scope: 'admin' },
      handler: async (request, reply) => {
        const input = {
          params: (params === null ? request.params : params(request.params)) as Record<string, string>,
          query: (query === null ? {} : query(request.query ?? {})) as Record<string, unknown>,
          body: body === null ? undefined : body(jsonObject(request.body)),
        };
        const answer = await route.handle(input);
        return reply.code(route.status ?? 200).send(answer);
      },
    });
  }
}

function jsonObject(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new GatewayError('invalid_body', 'The request body must be a JSON object.');
  return body;
}
