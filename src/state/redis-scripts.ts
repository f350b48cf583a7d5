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
 * `charge`: KEYS one per meter: a counter's group, or a slot set (a sorted set of slot → the server
 * time its lease ends). ARGV[1] a JSON array of six numbers per meter: kind (0 a counter, 1 a
 * counter changed only if it exists, 2 a counter that asks for room, 3 a slot, 4 a slot that asks
 * for room), amount, limit (null for none), ttlMs, seed (null for none), needsSeed (1 or 0); then,
 * in the meters' order, each meter's name (a counter's field, a slot meter's slot) and each room
 * meter's room, one argument each. A slot room of K is K more slots, named after the slot with
 * `#1` … `#K`, taken with the same lease. Returns { refused index or -1, { values }, { missing
 * indexes }, { indexes whose room was taken } } with numbers as strings. The same rules as
 * MemoryMeters.
 *
 * A group is a hash: each counter a field, its value the server time it expires at (13 digits, a
 * millisecond time from 2001 to 2286) followed by its number; `#` when the hash itself expires and
 * `!` when its expired fields are next looked for. The hash lives an eighth of its longest-lived
 * field's lifetime past that field, so it is extended once in a while rather than at every write,
 * and its expired fields are deleted once a minute at most; a field found expired reads as absent.
 *
 * Redis spends its time on a charge per command and per Lua operation, not per byte, so the script
 * does as few of each as it can. One holder's counters (its requests and tokens this minute, its
 * quotas) are read with one HMGET and written with one HSET, where a key of their own cost a GET
 * and a SET each. The numbers travel as one JSON argument, which cjson (C) takes apart at a third of
 * what splitting comma-separated text in Lua cost, and which costs the gateway less to encode than
 * one argument per number (ioredis encodes each on its own). Each lifetime is written as text once
 * a call, not once a counter. Names are free text, so each stays an argument of its own.
 *
 * A key may appear more than once (the settlements of several requests of one holder): `current`
 * carries each meter's value, and `present` whether it exists, from one meter to the next, so
 * every change counts. Lua numbers are doubles, as the memory backend's are; `%.17g` keeps them.
 */
export const CHARGE = script(`${NOW}
local count = #KEYS
local packed = cjson.decode(ARGV[1])
if #packed ~= 6 * count then return redis.error_reply('charge: the packed meters do not match the keys') end
local null = cjson.null
local kinds, amounts, limits, ttls, names, seeds, needsSeed, rooms, isSlot = {}, {}, {}, {}, {}, {}, {}, {}, {}
local nextName = 2
for i = 1, count do
  local base = 6 * i - 6
  local kind = packed[base + 1]
  kinds[i] = kind
  isSlot[i] = kind >= 3
  amounts[i] = packed[base + 2]
  local limit = packed[base + 3]
  if limit ~= null then limits[i] = limit end
  ttls[i] = packed[base + 4]
  local seed = packed[base + 5]
  if seed ~= null then seeds[i] = seed end
  needsSeed[i] = packed[base + 6] == 1
  names[i] = ARGV[nextName]
  nextName = nextName + 1
  if kind == 2 or kind == 4 then
    rooms[i] = tonumber(ARGV[nextName])
    nextName = nextName + 1
  end
end
local nowText = string.format('%.0f', now)
-- Each group's fields, read with one HMGET: the meters' own, then '#' and '!'.
local groupFields, positions = {}, {}
for i = 1, count do
  if not isSlot[i] then
    local fields = groupFields[KEYS[i]]
    if fields == nil then
      fields = {}
      groupFields[KEYS[i]] = fields
    end
    fields[#fields + 1] = names[i]
    positions[i] = #fields
  end
end
local stored, groupEnds, writes = {}, {}, {}
for key, fields in pairs(groupFields) do
  local width = #fields
  fields[width + 1] = '#'
  fields[width + 2] = '!'
  local found = redis.call('HMGET', key, unpack(fields))
  stored[key] = found
  groupEnds[key] = tonumber(found[width + 1]) or 0
  local pruneAt = found[width + 2]
  -- Only a hash that exists (its '#' is written with its first field): a read creates nothing.
  if groupEnds[key] > 0 and (not pruneAt or pruneAt <= nowText) then
    local all = redis.call('HGETALL', key)
    local stale = {}
    for j = 1, #all, 2 do
      local name = all[j]
      if name ~= '#' and name ~= '!' and string.sub(all[j + 1], 1, 13) <= nowText then stale[#stale + 1] = name end
    end
    for first = 1, #stale, 500 do redis.call('HDEL', key, unpack(stale, first, math.min(first + 499, #stale))) end
    writes[key] = { '!', string.format('%.0f', now + 60000) }
  end
end
local values, absent, missing, current, present, taken, ids = {}, {}, {}, {}, {}, {}, {}
for i = 1, count do
  if isSlot[i] then
    ids[i] = KEYS[i]
    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', nowText)
    values[i] = redis.call('ZCARD', KEYS[i])
  else
    ids[i] = KEYS[i] .. '\\n' .. names[i]
    local text = stored[KEYS[i]][positions[i]]
    if text and string.sub(text, 1, 13) > nowText then
      values[i] = tonumber(string.sub(text, 14))
    else
      absent[i] = true
      if seeds[i] then
        values[i] = seeds[i]
      else
        values[i] = 0
        if needsSeed[i] then missing[#missing + 1] = tostring(i - 1) end
      end
    end
  end
  if current[ids[i]] == nil then
    current[ids[i]] = values[i]
    present[ids[i]] = not absent[i]
  end
end
local function reply(refused)
  local texts = {}
  for i = 1, count do texts[i] = string.format('%.17g', values[i]) end
  return { tostring(refused), texts, missing, taken }
end
if #missing > 0 then return reply(-1) end
-- Counter writes, one HSET per group at the end (a field written twice keeps its last value).
local endTexts, writeEnds, writeTtls = {}, {}, {}
local function write(i, value)
  local key, ttl = KEYS[i], ttls[i]
  local ends = endTexts[ttl]
  if ends == nil then
    ends = string.format('%.0f', now + ttl)
    endTexts[ttl] = ends
  end
  local list = writes[key]
  if list == nil then
    list = {}
    writes[key] = list
  end
  if writeTtls[key] == nil or ttl > writeTtls[key] then writeTtls[key] = ttl end
  list[#list + 1] = names[i]
  list[#list + 1] = ends .. string.format('%.17g', value)
end
local function flush()
  for key, list in pairs(writes) do
    local ttl = writeTtls[key]
    if ttl and now + ttl > groupEnds[key] then
      local ends = string.format('%.0f', now + ttl + math.floor(ttl / 8))
      list[#list + 1] = '#'
      list[#list + 1] = ends
      -- A new hash has nothing expired to look for yet.
      if groupEnds[key] == 0 then
        list[#list + 1] = '!'
        list[#list + 1] = string.format('%.0f', now + 60000)
      end
      redis.call('HSET', key, unpack(list))
      redis.call('PEXPIREAT', key, ends)
    else
      redis.call('HSET', key, unpack(list))
    end
  end
end
for i = 1, count do
  if absent[i] and seeds[i] then
    write(i, values[i])
    present[ids[i]] = true
  end
end
for i = 1, count do
  if limits[i] and values[i] >= limits[i] then
    flush()
    return reply(i - 1)
  end
end
for i = 1, count do
  local key = KEYS[i]
  local id = ids[i]
  local kind = kinds[i]
  local amount = amounts[i]
  if isSlot[i] then
    local slot = names[i]
    if amount > 0 then
      local ttl = ttls[i]
      local endsAt = string.format('%.0f', now + ttl)
      local before = current[id]
      current[id] = before + redis.call('ZADD', key, endsAt, slot)
      if kind == 4 and limits[i] - before - amount >= ${ROOM_SHARE} * rooms[i] then
        local members = {}
        for j = 1, rooms[i] do
          members[2 * j - 1] = endsAt
          members[2 * j] = slot .. '#' .. j
        end
        current[id] = current[id] + redis.call('ZADD', key, unpack(members))
        taken[#taken + 1] = tostring(i - 1)
      end
      if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
    elseif amount < 0 then
      current[id] = current[id] - redis.call('ZREM', key, slot)
    end
    values[i] = current[id]
  else
    if kind == 2 and limits[i] - current[id] - amount >= ${ROOM_SHARE} * rooms[i] then
      amount = amount + rooms[i]
      taken[#taken + 1] = tostring(i - 1)
    end
    if amount ~= 0 and (kind ~= 1 or present[id]) then
      current[id] = current[id] + amount
      values[i] = current[id]
      present[id] = true
      write(i, values[i])
    end
  end
end
flush()
return reply(-1)`);

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
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
    return client.eval(lua, keys.length, ...keys, ...args);
  }
}
