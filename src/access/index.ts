export { canUseModel, requireModelAccess, requireScope } from './authorize.js';
export { parseDuration } from '../core/duration.js';
export { DEFAULT_SCOPES, SCOPES, isScope, type Scope } from './scopes.js';
export { TokenAuthenticator, type Principal } from './token-authenticator.js';
export { TokenInputError, TokenService, type CreateTokenInput, type CreatedToken } from './token-service.js';
