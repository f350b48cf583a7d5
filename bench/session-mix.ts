/**
 * Which session id, if any, each request of the pool scenario carries: every other request an
 * `X-Session-Id`, the rest none (the gateway infers one for those unless told not to).
 *
 * The ids are drawn at random from a window of `LIVE_SESSIONS` that slides forward by one id every
 * `NEW_SESSION_EVERY` session requests. So at any time ~1,000 conversations are going on, and in
 * steady state about one session request in `NEW_SESSION_EVERY` opens a session (a binding is
 * created) while the others continue one (a binding is read and renewed). A fixed set of 1,000
 * would be bound within the warm-up's first second, and the measured rounds would only ever see
 * kept bindings, which is not what a gateway in use sees.
 *
 * One mix per target, shared by every load generator, so a session's later requests find the
 * binding its earlier ones made whichever phase of the bench sent them.
 */
export const LIVE_SESSIONS = 1_000;
export const NEW_SESSION_EVERY = 10;
export const SESSION_HEADER = 'x-session-id';

export class SessionMix {
  /** Requests handed out so far (with and without a session). */
  private requests = 0;

  /** The session id of the next request, or null when it carries none. */
  next(): string | null {
    const index = this.requests++;
    if (index % 2 === 0) return null;
    return sessionId(Math.floor(index / 2));
  }

  /** The headers of the next request: `base` plus its session id, if it has one. */
  headers(base: Record<string, string>): Record<string, string> {
    const id = this.next();
    return id === null ? base : { ...base, [SESSION_HEADER]: id };
  }

  /**
   * The same mix as a wrk script's `request()` (wrk runs it per request, in LuaJIT), starting where
   * this mix stands; `advance` with wrk's request count afterwards.
   */
  wrkRequestFunction(): string {
    return `local mix_requests = ${this.requests}
local mix_plain = nil
local mix_headers = nil
request = function()
  local index = mix_requests
  mix_requests = mix_requests + 1
  if index % 2 == 0 then
    if mix_plain == nil then mix_plain = wrk.format() end
    return mix_plain
  end
  if mix_headers == nil then
    mix_headers = {}
    for name, value in pairs(wrk.headers) do mix_headers[name] = value end
  end
  local base = math.floor(math.floor(index / 2) / ${NEW_SESSION_EVERY})
  mix_headers["${SESSION_HEADER}"] = "bench-session-" .. (base + math.random(0, ${LIVE_SESSIONS - 1}))
  return wrk.format(nil, nil, mix_headers)
end
`;
  }

  /** Moves the mix past `requests` requests that another generator (wrk) sent. */
  advance(requests: number): void {
    if (Number.isFinite(requests) && requests > 0) this.requests += requests;
  }
}

/** The id of the `sessionRequest`-th session request: the window's start plus a random offset in it. */
function sessionId(sessionRequest: number): string {
  const base = Math.floor(sessionRequest / NEW_SESSION_EVERY);
  return `bench-session-${base + Math.floor(Math.random() * LIVE_SESSIONS)}`;
}
