export { canUseModel, requireModelAccess, requireScope } from './authorize.js';
export { parseDuration } from '../core/duration.js';
export { DEFAULT_SCOPES, SCOPES, isScope, type Scope } from './scopes.js';
export { TokenAuthenticator, type Principal } from './token-authenticator.js';
export { TokenService, type CreateTokenInput, type CreatedToken, type TokenListRequest, type TokenUpdate } from './token-service.js';
export { TeamService, type NewTeam, type TeamUpdate } from './team-service.js';
export { allPages, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type Page, type PageRequest } from './list-page.js';
export { invalidField, type FieldLocation } from './input-checks.js';
export {
  CallerLimits,
  type Admission,
  type AdmissionResult,
  type CallerLimitsOptions,
  type QuotaUse,
  type Spending,
  type SpendLedger,
} from './caller-limits.js';
export { projectKey, quotaHolders, QUOTA_LIMITS, type HolderLimits, type LimitHolder, type SpendMatch } from './limit-holders.js';
export { ConsoleSessions, csrfTokenMatches, type ConsoleSession, type ConsoleSessionTimes } from './console-sessions.js';
