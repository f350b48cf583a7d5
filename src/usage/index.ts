export { RequestLogQueue, type RequestLogQueueOptions } from './request-log-queue.js';
export { RequestRecord, type FailedAttempt } from './request-record.js';
export { RequestRecorder } from './request-recorder.js';
export { estimateChatUsage, estimateEmbeddingTokens } from './token-estimator.js';
export { countTokens, type CountTokens } from './tokenizer.js';
export { costOf, type ModelPrice } from './model-prices.js';
