import { MAX_SLOT_ROOM, ROOM_SHARE, type Meter } from '../state/index.js';
import { ROOM_IDLE_MS, ROOM_REQUESTS } from './counter-rooms.js';
import type { PlannedMeter } from './limit-plan.js';

/** Slots this process took in advance on one holder's requests in flight. */
interface SlotRoom {
  readonly group: string;
  readonly ttlMs: number;
  /** Who holds the room's slots in the state: the process, as it was named when the room was granted. */
  readonly owner: string;
  /** The room's slots no request of this process holds now. */
  free: number;
  /** The room's slots requests of this process hold now. */
  inUse: number;
  /** A charge asking for room here is on its way. */
  asking: boolean;
  usedAt: number;
  /** The slot set's size in the state when last read (with every process's room in it). */
  seen: number;
}

/**
 * Slots among the requests in flight (`max_concurrent`) far from their limits are taken from room
 * taken in advance, as counters are (counter-rooms.ts): the state grants a room of slots with the
 * admission that asks for it, only while at least ROOM_SHARE times as many are left under the
 * limit, and a request that finds a free slot of its process's room holds that one, without a
 * round trip. A room's slots are the process's slots like any other in the state, under its lease,
 * which the process's heartbeat renews while it holds them (free or in use), so a crashed process's
 * room is free within a lease. A room unused for ROOM_IDLE_MS, and every room at shutdown, gives
 * its free slots back; a slot in use goes back when its request ends.
 */
export class SlotRooms {
  private readonly rooms = new Map<string, SlotRoom>();

  /** Takes a free slot of the entry's room for a request; false when none is free. */
  take(key: string, now: number): boolean {
    const room = this.rooms.get(key);
    if (room === undefined || room.free === 0) return false;
    room.free--;
    room.inUse++;
    room.usedAt = now;
    return true;
  }

  /**
   * The room to ask for with an admission that takes its own slot, or undefined for none: as many
   * slots as this process's requests hold from its room now (so a room grows with the process's
   * concurrency), at least ROOM_REQUESTS, and half of what the state would grant at most. Only
   * for a set this process took a slot on within ROOM_IDLE_MS: a holder with a request now and
   * then would take a room and give it back unused at every request, which costs the state more
   * than the slot alone.
   */
  want(entry: PlannedMeter, owner: string, now: number): number | undefined {
    const room = this.rooms.get(entry.key);
    if (room === undefined) {
      this.open(entry, owner, now);
      return undefined;
    }
    if (room.asking || room.owner !== owner) return undefined;
    if (now - room.usedAt >= ROOM_IDLE_MS) {
      room.usedAt = now;
      return undefined;
    }
    const cap = (entry.limit - room.seen - 1) / (2 * ROOM_SHARE);
    const want = Math.floor(Math.min(Math.max(ROOM_REQUESTS, room.inUse), cap, MAX_SLOT_ROOM));
    if (want < ROOM_REQUESTS) return undefined;
    room.asking = true;
    return want;
  }

  /**
   * The state admitted a charge taking a slot on the entry's set for `owner`: `asked` is the room
   * asked for with it (undefined for none), `granted` whether it was taken, `value` the set's size
   * after it. Returns how many granted slots no room of `owner` is left to hold (given back
   * meanwhile: at shutdown, or the process renamed after a failure), which go back to the state.
   */
  answered(entry: PlannedMeter, owner: string, asked: number | undefined, granted: boolean, value: number, now: number): number {
    const room = this.rooms.get(entry.key);
    if (room === undefined || room.owner !== owner) return granted ? (asked ?? 0) : 0;
    room.seen = value;
    if (asked === undefined) return 0;
    room.asking = false;
    if (!granted) return 0;
    room.free += asked;
    room.usedAt = now;
    return 0;
  }

  /** A charge that asked for room was refused, or not answered: another request may ask. */
  unanswered(key: string): void {
    const room = this.rooms.get(key);
    if (room !== undefined) room.asking = false;
  }

  /**
   * A request that held a slot of a room of `owner` ended (or was refused by another meter): the
   * slot is free in the room again, true; false when that room has been given back meanwhile (the
   * slot then goes back to the state with the request's settlement).
   */
  put(key: string, owner: string, now: number): boolean {
    const room = this.rooms.get(key);
    if (room === undefined || room.owner !== owner) return false;
    // A slot of a room given back while it was in use comes back to the room opened since.
    if (room.inUse > 0) room.inUse--;
    room.free++;
    room.usedAt = now;
    return true;
  }

  /** The set's size as this process knows it: what the state last showed, less the free slots it holds. */
  known(key: string, value: number): number {
    const room = this.rooms.get(key);
    return room === undefined ? value : room.seen - room.free;
  }

  /** How many free slots this process holds on a set (0 for none). */
  held(key: string): number {
    return this.rooms.get(key)?.free ?? 0;
  }

  /** Each room that holds slots in the state (free or in use) and how many, for the heartbeat that renews its owner's lease. */
  forEachHeld(visit: (key: string, group: string, owner: string, ttlMs: number, slots: number) => void): void {
    for (const [key, room] of this.rooms) if (room.free + room.inUse > 0) visit(key, room.group, room.owner, room.ttlMs, room.free + room.inUse);
  }

  /**
   * Rooms unused for ROOM_IDLE_MS (every room with `every`) give their free slots back, as
   * releases in `releases`, and are forgotten: their slots in use go back when their requests end.
   */
  release(now: number, releases: Meter[], every: boolean): void {
    for (const [key, room] of this.rooms) {
      if (!every && (room.asking || now - room.usedAt < ROOM_IDLE_MS)) continue;
      if (room.free > 0) releases.push({ key, group: room.group, amount: -room.free, limit: null, ttlMs: room.ttlMs, owner: room.owner });
      this.rooms.delete(key);
    }
  }

  private open(entry: PlannedMeter, owner: string, now: number): SlotRoom {
    const room: SlotRoom = { group: entry.group, ttlMs: entry.ttlMs, owner, free: 0, inUse: 0, asking: false, usedAt: now, seen: 0 };
    this.rooms.set(entry.key, room);
    return room;
  }
}
