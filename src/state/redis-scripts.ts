import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ROOM_SHARE } from './shared-state.js';

/**
 * The operations of RedisState that read and then write run as Lua scripts: Redis runs a script
 * to its end before any other command, which makes each one atomic across every gateway process.
 * Any script that needs the time takes it from the server (`TIME`), never from the caller, so
 * replicas whose clocks disagree still agree on windows and field expiry. Numbers travel as strings
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
 * `charge`: KEYS the records of the meters' groups, each once. ARGV[1] nine big-endian doubles per
 * meter: its group's index in KEYS (from 1), kind (0 a counter, 1 a counter changed only if it
 * exists, 2 a slot set), amount, limit (NaN for none), ttlMs, seed (NaN for none), needsSeed (1 or
 * 0), room (NaN for none), atLeast (0 for none); then, in the meters'
 * order, each meter's key and, for a slot set, its owner, one argument each. Returns big-endian
 * doubles: the refused index or -1, the count and each meter's value, the count and the indexes
 * of the missing seeds, the count and the indexes whose room was taken. The same rules as
 * MemoryMeters.
 *
 * A group's record is one string, MessagePack of `{ v = { key → value }, e = { key → expiresAt },
 * s = { key → { owner → slots } }, l = { key → { owner → leaseEnd } } }` (server times in ms; maps
 * of numbers rather than a table per entry, which cmsgpack would build and Lua collect), which
 * lives as long as its longest-lived entry; whatever has expired is left out each time it is
 * written, and reads as absent until then.
 *
 * Redis's time on a charge went to its Lua work, not its commands: a number turned to text or
 * back costs about 0.3 µs on a small host, and a charge of 24 meters did several hundred such
 * operations. So the numbers travel as binary doubles both ways (`struct`, in C, with no
 * conversion), and a holder's meters are one record, read with one GET, taken apart by `cmsgpack`
 * (C), and written back with one SET: a limit holder's 8 meters cost two commands and no text. A
 * slot set counts slots by owner (a process), so a holder with many requests in flight is still a
 * few entries. Keys and owners are free text, so each is an argument of its own.
 */
export const CHARGE = script(`${NOW}
local count = #ARGV[1] / 72
if count ~= math.floor(count) then return redis.error_reply('charge: the packed meters are not whole') end
-- Five hundred meters at a time: Lua takes fewer than 8,000 values from one call.
local numbers = {}
for first = 1, count, 500 do
  local meters = math.min(500, count - first + 1)
  local chunk = { struct.unpack('>' .. string.rep('d', 9 * meters), ARGV[1], 72 * first - 71) }
  local base = 9 * first - 9
  for j = 1, 9 * meters do numbers[base + j] = chunk[j] end
end
-- Meter i's numbers stay in numbers, from 9 * (i - 1) + 1 (NaN, which is not equal to itself, for none).
local GROUP, KIND, AMOUNT, LIMIT, TTL, SEED, NEEDS_SEED, ROOM, AT_LEAST = 1, 2, 3, 4, 5, 6, 7, 8, 9
local records, changed, keys, names, owners, values, absent, missing = {}, {}, {}, {}, {}, {}, {}, {}
local function setTotal(record, name)
  local total = 0
  local slots = record.s[name]
  if slots then
    local leases = record.l[name]
    for owner, held in pairs(slots) do
      if leases[owner] > now then total = total + held end
    end
  end
  return total
end
-- Every meter as the step finds it.
local nextName = 2
for i = 1, count do
  local base = 9 * i - 9
  local name = ARGV[nextName]
  names[i] = name
  nextName = nextName + 1
  local key = KEYS[numbers[base + GROUP]]
  keys[i] = key
  local record = records[key]
  if record == nil then
    local blob = redis.call('GET', key)
    if blob then record = cmsgpack.unpack(blob) else record = {} end
    record.v = record.v or {}
    record.e = record.e or {}
    record.s = record.s or {}
    record.l = record.l or {}
    records[key] = record
  end
  if numbers[base + KIND] == 2 then
    owners[i] = ARGV[nextName]
    nextName = nextName + 1
    values[i] = setTotal(record, name)
  else
    local expiresAt = record.e[name]
    if expiresAt and expiresAt > now then
      values[i] = record.v[name]
    else
      absent[i] = true
      local seed = numbers[base + SEED]
      if seed == seed then
        values[i] = seed
      else
        values[i] = 0
        if numbers[base + NEEDS_SEED] == 1 then missing[#missing + 1] = i - 1 end
      end
    end
  end
end
local function reply(refused, taken)
  local list = { refused, count }
  for i = 1, count do list[i + 2] = values[i] end
  list[#list + 1] = #missing
  for _, index in ipairs(missing) do list[#list + 1] = index end
  list[#list + 1] = #taken
  for _, index in ipairs(taken) do list[#list + 1] = index end
  local parts = {}
  for first = 1, #list, 1000 do
    local last = math.min(first + 999, #list)
    parts[#parts + 1] = struct.pack('>' .. string.rep('d', last - first + 1), unpack(list, first, last))
  end
  return table.concat(parts)
end
-- Each record changed is written whole, without what has expired, to live as long as its longest-lived entry.
local function save()
  for key in pairs(changed) do
    local record = records[key]
    local last = 0
    for name, expiresAt in pairs(record.e) do
      if expiresAt <= now then
        record.e[name] = nil
        record.v[name] = nil
      elseif expiresAt > last then
        last = expiresAt
      end
    end
    for name, leases in pairs(record.l) do
      local slots = record.s[name]
      local held = false
      for owner, leaseEnd in pairs(leases) do
        if leaseEnd <= now then
          leases[owner] = nil
          slots[owner] = nil
        else
          held = true
          if leaseEnd > last then last = leaseEnd end
        end
      end
      if not held then
        record.l[name] = nil
        record.s[name] = nil
      end
    end
    if last > now then
      redis.call('SET', key, cmsgpack.pack(record), 'PX', string.format('%.0f', last - now))
    else
      redis.call('DEL', key)
    end
  end
end
if #missing > 0 then return reply(-1, {}) end
for i = 1, count do
  if absent[i] then
    local seed = numbers[9 * i - 9 + SEED]
    local record = records[keys[i]]
    local name = names[i]
    if seed == seed and not (record.e[name] and record.e[name] > now) then
      record.v[name] = seed
      record.e[name] = now + numbers[9 * i - 9 + TTL]
      changed[keys[i]] = true
    end
  end
end
for i = 1, count do
  local limit = numbers[9 * i - 9 + LIMIT]
  if limit == limit and values[i] >= limit then
    save()
    return reply(i - 1, {})
  end
end
local taken = {}
for i = 1, count do
  local base = 9 * i - 9
  local record = records[keys[i]]
  local name = names[i]
  local amount = numbers[base + AMOUNT]
  local limit = numbers[base + LIMIT]
  local ttl = numbers[base + TTL]
  local room = numbers[base + ROOM]
  if numbers[base + KIND] == 2 then
    local total = setTotal(record, name)
    if room == room and limit - total - amount >= ${ROOM_SHARE} * room then
      amount = amount + room
      taken[#taken + 1] = i - 1
    end
    local owner = owners[i]
    local slots, leases = record.s[name], record.l[name]
    local held = 0
    if slots and slots[owner] and leases[owner] > now then held = slots[owner] end
    local after = held + amount
    if after < numbers[base + AT_LEAST] then after = numbers[base + AT_LEAST] end
    if after > 0 then
      if slots == nil then
        slots, leases = {}, {}
        record.s[name] = slots
        record.l[name] = leases
      end
      slots[owner] = after
      leases[owner] = now + ttl
      changed[keys[i]] = true
    elseif slots and slots[owner] then
      slots[owner] = nil
      leases[owner] = nil
      changed[keys[i]] = true
    end
    values[i] = total + after - held
  else
    local expiresAt = record.e[name]
    local live = expiresAt and expiresAt > now
    local current = 0
    if live then current = record.v[name] end
    if room == room and limit - current - amount >= ${ROOM_SHARE} * room then
      amount = amount + room
      taken[#taken + 1] = i - 1
    end
    if amount ~= 0 and (numbers[base + KIND] ~= 1 or live) then
      record.v[name] = current + amount
      record.e[name] = now + ttl
      values[i] = current + amount
      changed[keys[i]] = true
    end
  end
end
save()
return reply(-1, taken)`);

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

/** ioredis's `…Buffer` forms of EVALSHA and EVAL, which its types leave out: replies stay bytes. */
interface BufferScripting {
  evalshaBuffer(sha: string, keyCount: number, ...keysAndArgs: Array<string | Buffer>): Promise<unknown>;
  evalBuffer(lua: string, keyCount: number, ...keysAndArgs: Array<string | Buffer>): Promise<unknown>;
}

/** runScript for a script whose reply is bytes: a bulk string reply comes back as a Buffer, not decoded as UTF-8. */
export async function runBinaryScript(client: Redis, { lua, sha }: LuaScript, keys: string[], args: Array<string | Buffer>): Promise<unknown> {
  const scripting = client as unknown as BufferScripting;
  try {
    return await scripting.evalshaBuffer(sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!isNoScript(error)) throw error;
    return scripting.evalBuffer(lua, keys.length, ...keys, ...args);
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
