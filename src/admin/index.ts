export { CredentialAdmin, type CredentialView } from './credential-admin.js';
