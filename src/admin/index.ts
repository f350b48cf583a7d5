export { CredentialAdmin, type CredentialView } from './credential-admin.js';
export { ACCOUNT_PROVIDERS, accountSealContext, UpstreamAccounts, type AccountDocumentCheck, type AccountProvider, type NewAccount, type StoredAccountView } from './upstream-accounts.js';
