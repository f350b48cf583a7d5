export { MemoryState, DEFAULT_SWEEP_INTERVAL_MS, type MemoryStateOptions } from './memory-state.js';
export { openState, type OpenStateOptions } from './open-state.js';
export { RedisState, DEFAULT_KEY_PREFIX, type RedisStateOptions } from './redis-state.js';
export { slidingWindowEstimate, type ChargeOutcome, type KeyCap, type Meter, type SharedState, type WindowCount } from './shared-state.js';
export { withStateLock, type StateLockOptions } from './state-lock.js';
