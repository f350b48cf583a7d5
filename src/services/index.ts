export { ChatCompletionService, type ChatInput, type CompletionOutcome, type StreamOutcome } from './chat-completion-service.js';
export { NativeService, type NativeInput, type NativeOutcome } from './native-service.js';
export { ResponsesService, type ResponsesInput, type ResponsesOutcome, type ResponsesServiceOptions } from './responses-service.js';
export { ResponseStore, type ResponseStateStore, type StoredResponse } from './responses/response-store.js';
export { responsesErrorEvent } from '../protocols/openai-responses/responses-error-event.js';
export type { ResponsesServerSentEvent } from '../protocols/openai-responses/responses-event-stream.js';
export { MessagesService, type MessagesInput, type MessagesOutcome, type MessagesServiceOptions } from './messages-service.js';
export { messagesErrorBody, messagesStatus } from '../protocols/anthropic-messages/messages-error.js';
export type { MessagesServerSentEvent } from '../protocols/anthropic-messages/messages-types.js';
export { EmbeddingService, type EmbeddingInput, type EmbeddingList } from './embedding-service.js';
export { RerankService, type RerankInput, type RerankList } from './rerank-service.js';
export { resolveModel } from './resolve-model.js';
export { SpeechService, type SpeechInput, type SpeechOutcome } from './speech-service.js';
export { TranscriptionService, type TranscriptionInput } from './transcription-service.js';

/** The stream events chat answers with, for the edge that writes them (it does not import providers). */
export type { ChatStreamEvent } from '../providers/provider-adapter.js';
