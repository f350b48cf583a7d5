export { buildCatalog, ModelCatalog, type CatalogModel, type Route } from './model-catalog.js';
export { routeOrder } from './route-order.js';
export { resolveSession, type SessionIdentity, type SessionSource } from './session-id.js';
export { withFailover, type Attempt } from './with-failover.js';
export { ChatCompletionService, type ChatInput, type CompletionOutcome, type StreamOutcome } from './chat-completion-service.js';
export { resolveModel } from './resolve-model.js';
export { EmbeddingService, type EmbeddingInput, type EmbeddingList } from './embedding-service.js';
export { RerankService, type RerankInput, type RerankList } from './rerank-service.js';
export { SpeechService, type SpeechInput, type SpeechOutcome } from './speech-service.js';
