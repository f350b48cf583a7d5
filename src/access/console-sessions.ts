import { randomBytes } from 'node:crypto';
import { GatewayError } from '../errors/index.js';
import type { SharedState } from '../state/index.js';
import { digestsEqual, hashSecret } from './token-secret.js';

/** A console sign-in as the shared state keeps it: whose token it stands for, and its CSRF token. */
export interface ConsoleSession {
  /** sha256 of the admin token it was opened with: each call is admitted as that token, so revoking it ends the session. */
  readonly tokenHash: string;
  readonly tokenId: string;
  readonly csrfToken: string;
  readonly createdAt: number;
  /** The hard end, whatever the use. */
  readonly expiresAt: number;
}

export interface ConsoleSessionTimes {
  /** A session not used for this long ends. */
  idleMs: number;
  /** A session ends this long after it began. */
  maxAgeMs: number;
}

/** 256 random bits, base64url: the cookie's value and the CSRF token each. */
const SECRET_BYTES = 32;
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Console sign-ins, kept in the shared state (memory or Redis, like affinity bindings): every
 * gateway replica on one state sees a sign-in and a sign-out at once, and a session is cheap to
 * lose (a restart of a memory state asks operators to sign in again). The cookie carries a random
 * secret; the state holds only its hash, so a dump of the state holds no usable cookie. Each use
 * slides the idle expiry, never past `maxAgeMs` from sign-in.
 */
export class ConsoleSessions {
  constructor(
    private readonly state: SharedState,
    private readonly times: ConsoleSessionTimes,
    private readonly now: () => number = Date.now,
  ) {}

  /** Opens a session for the admin token; the secret goes in the cookie and is never stored. */
  async open(token: { tokenId: string; hash: string }): Promise<{ secret: string; session: ConsoleSession }> {
    const secret = randomBytes(SECRET_BYTES).toString('base64url');
    const createdAt = this.now();
    const session: ConsoleSession = {
      tokenHash: token.hash,
      tokenId: token.tokenId,
      csrfToken: randomBytes(SECRET_BYTES).toString('base64url'),
      createdAt,
      expiresAt: createdAt + this.times.maxAgeMs,
    };
    await reachState(this.state.set(key(secret), JSON.stringify(session), Math.min(this.times.idleMs, this.times.maxAgeMs)));
    return { secret, session };
  }

  /** The live session the cookie names, its idle expiry slid forward; null when there is none. */
  async find(secret: string): Promise<ConsoleSession | null> {
    if (!SECRET_PATTERN.test(secret)) return null;
    const now = this.now();
    const stored = await reachState(this.state.getAndTouch(key(secret), this.times.idleMs));
    if (stored === null) return null;
    const session = parse(stored);
    if (session === null || session.expiresAt <= now) return null;
    // The slide must not outlive the hard end: cut the TTL back when the idle time would.
    if (session.expiresAt - now < this.times.idleMs) await reachState(this.state.touch(key(secret), session.expiresAt - now));
    return session;
  }

  /** Ends it (sign-out); true when it was live. */
  end(secret: string): Promise<boolean> {
    if (!SECRET_PATTERN.test(secret)) return Promise.resolve(false);
    return reachState(this.state.delete(key(secret)));
  }
}

/**
 * The shared state's answer, or 503 `state_unavailable` when it cannot be reached (Redis down or
 * hanging: its commands reject within their timeout). Only argument errors (`TypeError`) are bugs.
 */
async function reachState<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch (error) {
    if (error instanceof TypeError) throw error;
    throw new GatewayError('state_unavailable', "The gateway's shared state is unavailable, so console sign-ins cannot be checked; retry shortly.", {
      cause: error,
    });
  }
}

/** Whether the header carries the session's CSRF token, compared in constant time. */
export function csrfTokenMatches(session: ConsoleSession, header: string | undefined): boolean {
  if (header === undefined || !SECRET_PATTERN.test(header)) return false;
  return digestsEqual(hashSecret(header), hashSecret(session.csrfToken));
}

function key(secret: string): string {
  return `console-session:${hashSecret(secret)}`;
}

function parse(stored: string): ConsoleSession | null {
  try {
    const value = JSON.parse(stored) as Partial<ConsoleSession>;
    if (typeof value.tokenHash !== 'string' || typeof value.tokenId !== 'string' || typeof value.csrfToken !== 'string') return null;
    if (typeof value.createdAt !== 'number' || typeof value.expiresAt !== 'number') return null;
    return value as ConsoleSession;
  } catch {
    return null;
  }
}
