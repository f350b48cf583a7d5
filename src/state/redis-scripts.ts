import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * The operations of RedisState that read and then write run as Lua scripts: Redis runs a script
 * to its end before any other command, which makes each one atomic across every gateway process.
 * Any script that needs the time takes it from the server (`TIME`), never from the caller, so
 * replicas whose clocks disagree still agree on windows and field expiry (the meters' rules, which
 * run in the gateway, are given the server's time by COMMIT_RECORDS's answers). Numbers travel as strings
 * (a script's number reply would be truncated to an integer): `%.17g` keeps every double exact,
 * `%.0f` writes a millisecond time without an exponent.
 */
export interface LuaScript {
  readonly lua: string;
  readonly sha: string;
}

function script(lua: string): LuaScript {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

const NOW = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`;

/** KEYS[1] the value; ARGV value, ttlMs. Returns the value in effect. */
export const SET_IF_ABSENT = script(`
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]`);

/**
 * KEYS[1] the value, KEYS[2] the index (a sorted set of value keys by when they were added);
 * ARGV value, ttlMs, limit. Returns the value in effect. Past the limit, the earliest keys go
 * with their values (deleted by name: the index only ever holds value keys of this prefix). The
 * index lives as long as the last key added to it.
 */
export const SET_IF_ABSENT_CAPPED = script(`
local existing = redis.call('GET', KEYS[1])
if existing then return existing end${NOW}
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], now, KEYS[1])
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if excess > 0 then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, excess - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, excess - 1)
  for _, key in ipairs(oldest) do redis.call('DEL', key) end
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return ARGV[1]`);

/** KEYS[1] the value; ARGV '1' when a value is expected (else '0'), expected, value, ttlMs. Returns 1 when set. */
export const COMPARE_AND_SET = script(`
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if current ~= ARGV[2] then return 0 end
elseif current then
  return 0
end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
return 1`);

/**
 * KEYS[1] the counter, a hash of start, current, previous; ARGV amount, windowMs. Returns
 * { windowStartMs, current, previous } as strings. The same rules as MemoryState.addToWindow.
 */
export const ADD_TO_WINDOW = script(`${NOW}
local amount = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local start = math.floor(now / windowMs) * windowMs
local stored = redis.call('HMGET', KEYS[1], 'start', 'current', 'previous')
local current, previous = 0, 0
if stored[1] then
  local storedStart = tonumber(stored[1])
  -- A server clock that stepped back (or a failover to a replica behind it) keeps counting in the
  -- window already reached rather than losing what that window holds.
  if storedStart > start then start = storedStart end
  if storedStart == start then
    current = tonumber(stored[2])
    previous = tonumber(stored[3])
  elseif storedStart == start - windowMs then
    previous = tonumber(stored[2])
  end
end
current = current + amount
if stored[1] or amount ~= 0 then
  redis.call('HSET', KEYS[1], 'start', string.format('%.0f', start), 'current', string.format('%.17g', current), 'previous', string.format('%.17g', previous))
  redis.call('PEXPIREAT', KEYS[1], string.format('%.0f', start + 2 * windowMs))
end
return { string.format('%.0f', start), string.format('%.17g', current), string.format('%.17g', previous) }`);

// An expiring map is KEYS[1], a hash of field → value, and KEYS[2], a sorted set of field → the
// server time it expires at. Expired fields are dropped from both before every read and write, so
// the map holds the live fields and those expired since it was last used.
const PRUNE = `
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', string.format('%.0f', now))
for first = 1, #expired, 500 do
  redis.call('HDEL', KEYS[1], unpack(expired, first, math.min(first + 499, #expired)))
end
if #expired > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('%.0f', now)) end`;

/** KEYS[1] values, KEYS[2] expiry times; ARGV field, value, ttlMs. */
export const SET_FIELD = script(`${NOW}${PRUNE}
local ttl = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], string.format('%.0f', now + ttl), ARGV[1])
-- Both keys live as long as the longest-lived field, so a short field never cuts a longer one off.
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return 1`);

/** KEYS[1] values, KEYS[2] expiry times. Returns the live fields as [field, value, field, value, …]. */
export const READ_FIELDS = script(`${NOW}${PRUNE}
return redis.call('HGETALL', KEYS[1])`);

/**
 * `charge` (redis-meters.ts): KEYS the records of the meters' groups; ARGV each record as the
 * gateway last saw it ('' for none), in KEYS' order, then the number of records to write, then
 * for each its index in KEYS (from 1), its text ('' to delete it) and its time to live in ms.
 * Writes only if every record is still what the gateway saw. Returns { 1, seconds, microseconds }
 * (the server's time) when written; else { 0, seconds, microseconds, each record as it is ('' for
 * none) }, and writes nothing. The rules themselves run in the gateway: Lua in Redis costs about
 * fifty machine instructions a step, and a charge's rules thousands of steps
 * (docs/performance.md).
 */
export const COMMIT_RECORDS = script(`
local count = #KEYS
local current = {}
for first = 1, count, 1000 do
  local found = redis.call('MGET', unpack(KEYS, first, math.min(first + 999, count)))
  for j = 1, #found do current[first + j - 1] = found[j] end
end
local time = redis.call('TIME')
for i = 1, count do
  if (current[i] or '') ~= ARGV[i] then
    local reply = { 0, time[1], time[2] }
    for j = 1, count do reply[j + 3] = current[j] or '' end
    return reply
  end
end
local writes = tonumber(ARGV[count + 1])
for j = 0, writes - 1 do
  local at = count + 2 + 3 * j
  local key = KEYS[tonumber(ARGV[at])]
  if ARGV[at + 1] == '' then
    redis.call('DEL', key)
  else
    redis.call('SET', key, ARGV[at + 1], 'PX', ARGV[at + 2])
  end
end
return { 1, time[1], time[2] }`);

// A budget pool is KEYS[1], a sorted set of key → the server time it expires at (the order entries
// are evicted in), KEYS[2], a hash of key → "bytes:group", KEYS[3], a hash of group → bytes, and
// KEYS[4], the pool's bytes. Each group's keys are also in a sorted set of its own, named
// ARGV[1] .. group: a group other than the caller's is known only once an entry names it, so those
// keys are built here (a single Redis, or keys of one slot, as everything here assumes). Expired
// entries stop counting before every read and write, at most 1,000 a call (each is pruned once).
const BUDGET_PRUNE = `
local groupBase = ARGV[1]
local function forget(key)
  local counted = redis.call('HGET', KEYS[2], key)
  redis.call('ZREM', KEYS[1], key)
  if not counted then return end
  local colon = string.find(counted, ':', 1, true)
  local bytes = tonumber(string.sub(counted, 1, colon - 1))
  local owner = string.sub(counted, colon + 1)
  redis.call('HDEL', KEYS[2], key)
  redis.call('ZREM', groupBase .. owner, key)
  if redis.call('HINCRBY', KEYS[3], owner, -bytes) <= 0 then redis.call('HDEL', KEYS[3], owner) end
  redis.call('DECRBY', KEYS[4], bytes)
end
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now), 'LIMIT', 0, 1000)
for _, key in ipairs(expired) do forget(key) end`;

/**
 * `setWithinBudget`: KEYS the pool's four (above) and KEYS[5], the caller's group's sorted set;
 * ARGV group key base, group, ttlMs, groupBytes, totalBytes, value key base, then key, value per
 * entry. Returns { 1 stored or 0, evicted }. The same rules as MemoryBudgets; `#` is a string's
 * length in bytes, which is the UTF-8 weight MemoryBudgets counts.
 */
export const SET_WITHIN_BUDGET = script(`${NOW}${BUDGET_PRUNE}
local group = ARGV[2]
local ttl = tonumber(ARGV[3])
local groupLimit = tonumber(ARGV[4])
local totalLimit = tonumber(ARGV[5])
local valueBase = ARGV[6]
local weight = 0
for i = 7, #ARGV, 2 do weight = weight + #ARGV[i] + #ARGV[i + 1] end
if weight > groupLimit or weight > totalLimit then return { 0, 0 } end
for i = 7, #ARGV, 2 do forget(ARGV[i]) end
local evicted = 0
local function evict(key)
  forget(key)
  redis.call('DEL', valueBase .. key)
  evicted = evicted + 1
end
while tonumber(redis.call('HGET', KEYS[3], group) or '0') + weight > groupLimit do
  local oldest = redis.call('ZRANGE', KEYS[5], 0, 0)[1]
  if not oldest then break end
  evict(oldest)
  -- Never counted (the pool's hash lost it): still out of the group's order, or this would not end.
  redis.call('ZREM', KEYS[5], oldest)
end
while tonumber(redis.call('GET', KEYS[4]) or '0') + weight > totalLimit do
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if not oldest then break end
  evict(oldest)
end
local expiresAt = string.format('%.0f', now + ttl)
for i = 7, #ARGV, 2 do
  local key = ARGV[i]
  redis.call('SET', valueBase .. key, ARGV[i + 1], 'PX', ttl)
  redis.call('ZADD', KEYS[1], expiresAt, key)
  redis.call('ZADD', KEYS[5], expiresAt, key)
  redis.call('HSET', KEYS[2], key, tostring(#key + #ARGV[i + 1]) .. ':' .. group)
end
redis.call('HINCRBY', KEYS[3], group, weight)
redis.call('INCRBY', KEYS[4], weight)
-- The entries just set are the last to expire: the pool's keys live as long as they do.
for i = 1, 5 do redis.call('PEXPIRE', KEYS[i], ttl) end
return { 1, evicted }`);

/** `budgetUsage`: KEYS the pool's four; ARGV group key base, group. Returns { group's bytes, pool's bytes } as strings. */
export const BUDGET_USAGE = script(`${NOW}${BUDGET_PRUNE}
return { redis.call('HGET', KEYS[3], ARGV[2]) or '0', redis.call('GET', KEYS[4]) or '0' }`);

/** EVALSHA, so each call sends a digest rather than the script; EVAL when the server lacks it. */
export async function runScript(client: Redis, { lua, sha }: LuaScript, keys: string[], args: Array<string | number>): Promise<unknown> {
  try {
    return await client.evalsha(sha, keys.length, ...keys, ...args);
  } catch (error) {
    // A restarted or flushed server has forgotten the script; EVAL runs it and caches it again.
    if (!isNoScript(error)) throw error;
    return client.eval(lua, keys.length, ...keys, ...args);
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
