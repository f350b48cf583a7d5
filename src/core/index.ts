export { parseRetryAfter } from './retry-after.js';
export type { Usage } from './usage.js';
