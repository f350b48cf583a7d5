export { RequestLogQueue, type RequestLogQueueOptions } from './request-log-queue.js';
export { RequestRecord } from './request-record.js';
export { RequestRecorder } from './request-recorder.js';
export { estimateChatUsage } from './token-estimator.js';
