import type { FastifyInstance } from 'fastify';
import type { CredentialAdmin } from '../../admin/index.js';

const ACTIONS = ['disable', 'enable', 'reset'] as const;

/**
 * `GET /admin/v1/credentials` and `POST /admin/v1/credentials/{id}/disable|enable|reset`, scope
 * `admin`. A change answers with the credential as it now is.
 */
export function registerAdminCredentialsRoutes(app: FastifyInstance, credentials: CredentialAdmin): void {
  app.get('/admin/v1/credentials', { config: { scope: 'admin' } }, async () => ({ object: 'list', data: credentials.list() }));
  app.get<{ Params: { id: string } }>('/admin/v1/credentials/:id', { config: { scope: 'admin' } }, async (request) => credentials.get(request.params.id));
  for (const action of ACTIONS) {
    app.post<{ Params: { id: string } }>(`/admin/v1/credentials/:id/${action}`, { config: { scope: 'admin' } }, async (request) => credentials[action](request.params.id));
  }
}
