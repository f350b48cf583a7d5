export { Cancellation } from './cancellation.js';
export { parseRetryAfter } from './retry-after.js';
export type { Usage } from './usage.js';
