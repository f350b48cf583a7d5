import type { FastifyInstance } from 'fastify';
import type { CredentialAdmin, UpstreamAccounts } from '../../admin/index.js';
import { parseNewAccountRequest } from '../../api/new-account-request.js';

const ACTIONS = ['disable', 'enable', 'reset'] as const;

/**
 * `GET /admin/v1/credentials` and `POST /admin/v1/credentials/{id}/disable|enable|reset`, scope
 * `admin`. A change answers with the credential as it now is. `POST /admin/v1/credentials` adds an
 * account at run time (stored sealed, served within seconds by every gateway process), `DELETE
 * /admin/v1/credentials/{id}` removes one; `GET /admin/v1/accounts` lists those stored.
 */
export function registerAdminCredentialsRoutes(app: FastifyInstance, credentials: CredentialAdmin, accounts: UpstreamAccounts): void {
  app.get('/admin/v1/credentials', { config: { scope: 'admin' } }, async () => ({ object: 'list', data: credentials.list() }));
  app.get<{ Params: { id: string } }>('/admin/v1/credentials/:id', { config: { scope: 'admin' } }, async (request) => credentials.get(request.params.id));
  for (const action of ACTIONS) {
    app.post<{ Params: { id: string } }>(`/admin/v1/credentials/:id/${action}`, { config: { scope: 'admin' } }, async (request) => credentials[action](request.params.id));
  }
  app.post('/admin/v1/credentials', { config: { scope: 'admin' } }, async (request, reply) => {
    const body = parseNewAccountRequest(request.body);
    const added = await accounts.add({
      id: body.id,
      provider: body.provider,
      document: typeof body.auth === 'string' ? body.auth : JSON.stringify(body.auth),
      ...(body.base_url === undefined ? {} : { baseUrl: body.base_url }),
      ...(body.token_url === undefined ? {} : { tokenUrl: body.token_url }),
    });
    return reply.code(201).send(added);
  });
  app.delete<{ Params: { id: string } }>('/admin/v1/credentials/:id', { config: { scope: 'admin' } }, async (request) => {
    await accounts.remove(request.params.id);
    return { id: request.params.id, deleted: true };
  });
  app.get('/admin/v1/accounts', { config: { scope: 'admin' } }, async () => ({ object: 'list', data: await accounts.list() }));
}
