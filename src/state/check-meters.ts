import { requireAmount, requireMilliseconds, requireString } from './check-arguments.js';
import { MAX_SLOT_ROOM, type Meter } from './shared-state.js';

/** The argument checks of `charge`, shared by every backend: a TypeError before anything changes. */
export function requireMeters(meters: readonly Meter[]): void {
  if (!Array.isArray(meters)) throw new TypeError('meters must be an array');
  for (const meter of meters) {
    requireString('key', meter.key);
    requireAmount(meter.amount);
    requireMilliseconds('ttlMs', meter.ttlMs);
    if (meter.limit !== null && (typeof meter.limit !== 'number' || Number.isNaN(meter.limit)))
      throw new TypeError(`limit must be a number or null, got ${String(meter.limit)}`);
    if (meter.owner !== undefined) {
      requireString('owner', meter.owner);
      if (!Number.isSafeInteger(meter.amount)) throw new TypeError(`slots are taken and given back whole, got ${meter.amount}`);
    }
    if (meter.group !== undefined) requireString('group', meter.group);
    if (meter.atLeast !== undefined && (meter.owner === undefined || !Number.isSafeInteger(meter.atLeast) || meter.atLeast < 0))
      throw new TypeError(`atLeast is a whole number of slots on a slot set, got ${String(meter.atLeast)}`);
    if (meter.seed !== undefined) requireAmount(meter.seed);
    if (meter.room !== undefined) {
      if (typeof meter.room !== 'number' || !Number.isFinite(meter.room) || meter.room <= 0)
        throw new TypeError(`room must be a positive number, got ${String(meter.room)}`);
      if (meter.ifPresent === true || meter.limit === null) throw new TypeError('room is taken only on a meter with a limit that it may create');
      if (meter.owner !== undefined && (meter.amount < 1 || !Number.isInteger(meter.room) || meter.room > MAX_SLOT_ROOM))
        throw new TypeError(`a slot's room is taken with slots (amount 1 or more), whole, at most ${MAX_SLOT_ROOM}`);
    }
  }
}
