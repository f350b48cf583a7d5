import { ROOM_SHARE, type Meter } from '../state/index.js';
import type { PlannedMeter } from './limit-plan.js';

/**
 * Room this process took in advance on one request, token or dollar counter: the state's counter already
 * holds it, so what the process counts against it costs the state nothing.
 */
interface Room {
  /** The counter's group in the state (its holder's key). */
  readonly group: string;
  readonly ttlMs: number;
  /** Taken and not yet used: never below 0 (what would go under it is charged to the state at once). */
  left: number;
  /**
   * Whether the state ever granted room here. Until it has, the counter is near its limit (or new)
   * and every change of it goes to the state: a reservation given back must not become room to
   * spend while the counter is over its limit.
   */
  granted: boolean;
  /** A charge asking for room here is on its way. */
  asking: boolean;
  /** What this process counted on the counter since it last asked the state: the next room is about a second of it. */
  spent: number;
  askedAt: number;
  usedAt: number;
  /** The counter's value in the state when last read (with every process's room in it). */
  seen: number;
}

/** A room is about this long of what the process counted lately on its counter. */
const ROOM_HORIZON_MS = 1_000;
/** A rate is measured over this long at least, so that a burst right after a room was taken does not read as a flood. */
const MIN_RATE_SPAN_MS = 100;
/** A room covers at least this many requests like the one asking for it, or none is asked for. */
export const ROOM_REQUESTS = 4;
/** A room unused this long goes back to the state. */
export const ROOM_IDLE_MS = 1_000;

/**
 * Counters far from their limits (requests, tokens and dollars) are counted from room taken in
 * advance: an admission that finds room left for every such meter of its holders counts its
 * request and reservation locally, and the state sees only its slots. Room is asked for with the admission
 * that needs it (one charge, as before), about a second of what this process counted there
 * lately, and the state grants it only while at least ROOM_SHARE times as much is left under
 * the limit: near a limit every request is counted in the state one by one, exactly as without
 * rooms. What is counted against a room was counted in the state when the room was taken, so
 * replicas together never pass a limit by more than without rooms; what a room holds unused
 * counts as spent to the others until it is given back (idle for ROOM_IDLE_MS, or at shutdown).
 */
export class CounterRooms {
  private readonly rooms = new Map<string, Room>();

  /**
   * Counts `amount` against the room of the entry's counter, when it has any left (the last
   * request may go past it by its own size, as it may past a limit: the part past it is charged to
   * the state, in `debts`). Returns that part, or -1, and nothing counted, when there is no room.
   */
  take(entry: PlannedMeter, amount: number, now: number, debts: Meter[]): number {
    const room = this.rooms.get(entry.key);
    if (room === undefined || room.left <= 0) return -1;
    return this.use(entry.key, room, amount, now, debts);
  }

  /** Undoes `take` (the request was refused by another meter, or went on without the state): `past` is what take returned. */
  giveBack(entry: PlannedMeter, amount: number, past: number, debts: Meter[]): void {
    const room = this.rooms.get(entry.key);
    if (room !== undefined) {
      room.left += amount - past;
      room.spent -= amount;
    } else if (amount - past > 0) {
      // Given back to the state meanwhile (idle): what it held of this request goes back there too.
      debts.push({ key: entry.key, group: entry.group, amount: -(amount - past), limit: null, ttlMs: entry.ttlMs, ifPresent: true });
    }
    if (past > 0) debts.push({ key: entry.key, group: entry.group, amount: -past, limit: null, ttlMs: entry.ttlMs, ifPresent: true });
  }

  /**
   * The room to ask for with a charge of `amount`, or undefined for none: near the limit, nothing
   * to size it by, or an ask for it already on its way (the requests admitted meanwhile are
   * charged in the state one by one: asking with each would take a room per request in flight).
   */
  want(entry: PlannedMeter, amount: number, now: number): number | undefined {
    let room = this.rooms.get(entry.key);
    if (room?.asking === true) return undefined;
    let want = ROOM_REQUESTS * amount;
    if (room !== undefined) want = Math.max(want, (room.spent * ROOM_HORIZON_MS) / Math.max(MIN_RATE_SPAN_MS, now - room.askedAt));
    // Half of what the state would grant at most, by the value last seen: asking for more is refused whole.
    const cap = (entry.limit - (room?.seen ?? 0) - amount) / (2 * ROOM_SHARE);
    if (want > cap) want = cap;
    // Whole tokens, so that counters of whole tokens stay exact (dollars are fractions anyway).
    if (entry.quantity === 'tokens') want = Math.floor(want);
    if (!(want > 0 && want >= ROOM_REQUESTS * amount)) return undefined;
    room ??= this.open(entry, now);
    room.asking = true;
    return want;
  }

  /**
   * The state admitted a charge of this counter: `asked` is the room asked for with it (undefined
   * for none), `room` what it granted (0 for none), `value` the counter after it.
   */
  answered(entry: PlannedMeter, asked: number | undefined, room: number, value: number, now: number): void {
    const held = this.rooms.get(entry.key) ?? this.open(entry, now);
    held.seen = value;
    if (asked === undefined) return;
    held.asking = false;
    held.left += room;
    if (room > 0) held.granted = true;
    held.spent = 0;
    held.askedAt = now;
    held.usedAt = now;
  }

  /** A charge that asked for room was refused, or not answered: another request may ask. */
  unanswered(entry: PlannedMeter): void {
    const room = this.rooms.get(entry.key);
    if (room !== undefined) room.asking = false;
  }

  /**
   * A settlement's adjustment of the counter (tokens used beyond or below the reservation, a cost):
   * counted against its room when the state granted one (false: the state must be told), and
   * remembered either way to size the next room.
   */
  settle(key: string, amount: number, now: number, debts: Meter[]): boolean {
    const room = this.rooms.get(key);
    if (room === undefined) return false;
    if (!room.granted) {
      room.spent += amount;
      return false;
    }
    this.use(key, room, amount, now, debts);
    return true;
  }

  /** The counter's value as this process knows it: what the state last showed, less the room it holds unused. */
  known(key: string, value: number): number {
    const room = this.rooms.get(key);
    return room === undefined ? value : room.seen - room.left;
  }

  /** What this process holds unused on a counter (0 for none). */
  held(key: string): number {
    return this.rooms.get(key)?.left ?? 0;
  }

  /** Rooms unused for ROOM_IDLE_MS (all of them with `every`) are given back: their give-backs are added to `out`. */
  release(now: number, out: Meter[], every = false): void {
    for (const [key, room] of this.rooms) {
      if (!every && now - room.usedAt < ROOM_IDLE_MS) continue;
      this.rooms.delete(key);
      // Only if present: a counter the state lost is rebuilt without this room in it.
      if (room.left > 0) out.push({ key, group: room.group, amount: -room.left, limit: null, ttlMs: room.ttlMs, ifPresent: true });
    }
  }

  /** An empty room for the entry's counter, held from now on (until it is idle). */
  private open(entry: PlannedMeter, now: number): Room {
    const room: Room = { group: entry.group, ttlMs: entry.ttlMs, left: 0, granted: false, asking: false, spent: 0, askedAt: now, usedAt: now, seen: 0 };
    this.rooms.set(entry.key, room);
    return room;
  }

  /** Counts `amount` against the room; returns the part past what was left, which goes to the state in `debts`. */
  private use(key: string, room: Room, amount: number, now: number, debts: Meter[]): number {
    room.left -= amount;
    room.spent += amount;
    room.usedAt = now;
    if (room.left >= 0) return 0;
    const past = -room.left;
    debts.push({ key, group: room.group, amount: past, limit: null, ttlMs: room.ttlMs, ifPresent: true });
    room.left = 0;
    return past;
  }
}
