export { CredentialAdmin, type AdministeredCredential, type CredentialView } from './credential-admin.js';
export {
  ACCOUNT_PROVIDERS,
  accountSealContext,
  UpstreamAccounts,
  type AccountDocumentCheck,
  type AccountProvider,
  type NewAccount,
  type StoredAccountView,
} from './upstream-accounts.js';
export type { AdminInput, AdminRoute } from './admin-route.js';
export { OPENAPI_PATH, openApiDocument, withOpenApi } from './openapi.js';
export { credentialRoutes } from './routes/credential-routes.js';
export { RequestQueries } from './request-queries.js';
export { requestRoutes } from './routes/request-routes.js';
export { teamRoutes } from './routes/team-routes.js';
export { tokenRoutes } from './routes/token-routes.js';
