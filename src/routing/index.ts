export { buildCatalog, ModelCatalog, type CatalogModel, type CredentialEntry, type Route } from './model-catalog.js';
export { withPublishedModels } from './published-models.js';
export { failureOf, Router, type AttemptObserver, type AttemptOutcome, type RouteCall, type Routed, type RoutedOperation, type RouterOptions } from './router.js';
export { resolveSession, type SessionIdentity, type SessionSource } from './session-id.js';
