export { MemoryState, DEFAULT_SWEEP_INTERVAL_MS, type MemoryStateOptions } from './memory-state.js';
export { openState, type OpenStateOptions } from './open-state.js';
export { RedisState, DEFAULT_KEY_PREFIX, type RedisStateOptions } from './redis-state.js';
export {
  slidingWindowEstimate,
  ROOM_SHARE,
  MAX_SLOT_ROOM,
  type BudgetedEntry,
  type BudgetOutcome,
  type BudgetUsage,
  type ByteBudget,
  type ChargeOutcome,
  type KeyCap,
  type Meter,
  type SharedState,
  type WindowCount,
} from './shared-state.js';
export { RequestPathState, StateUnavailableError, type LateOutcome, type RequestPathStateOptions, type RequestPathStateStatus } from './request-path-state.js';
export { withStateLock, DEFAULT_LOCK_LEASE_MS, type HeldLock, type StateLockOptions } from './state-lock.js';
