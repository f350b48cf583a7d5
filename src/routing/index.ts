export { buildCatalog, ModelCatalog, nativeModelOf, type CatalogModel, type CredentialEntry, type Route } from './model-catalog.js';
export { CREDENTIAL_STATES, CredentialHealth, type CredentialState, type CredentialStatus, type CredentialTransition } from './credential-health.js';
export { InFlight } from './in-flight.js';
export { inferSessionId } from './infer-session-id.js';
export { withPublishedModels } from './published-models.js';
export type { AttemptSummary } from './attempt-outcome.js';
export {
  Router,
  type Affinity,
  type AttemptObserver,
  type AttemptOutcome,
  type RouteCall,
  type Routed,
  type RoutedOperation,
  type RoutedSession,
  type RouterOptions,
} from './router.js';
export { SessionBindings, type BindingStore, type RoutingSession } from './session-bindings.js';
export { resolveMessagesSession, resolveNativeSession, resolveSession, usableSessionId, type SessionIdentity, type SessionSource } from './session-id.js';
export { SharedRoutingState, type RoutingStateStore, type SharedRoutingStateOptions } from './shared-routing-state.js';
export { RecentAttempts, RECENT_WINDOW_MS, type RecentCount } from './recent-attempts.js';
