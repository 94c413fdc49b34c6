-- touchWorker: registers a worker, refreshes its heartbeat or changes its status,
-- then files it in the indexes: every worker in workerIndex (scored by heartbeat),
-- in freeIndex (in its version's band, scored by lifetime) only while it can take
-- a session, and its major.minor in the type's versions while it is available.
-- Also adopts a worker another implementation registered (no fields, or only the
-- version its browser server reported).
-- KEYS[1] worker                  the worker's hash
-- KEYS[2] active = activeConnections
-- KEYS[3] lifetime = lifetimeConnections
-- KEYS[4] workerIndex
-- KEYS[5] freeIndex
-- KEYS[6] versions                the type's versions served
-- ARGV[1] ref                     '{browserType}:{workerId}'
-- ARGV[2] nowMs
-- ARGV[3] staleMs                 heartbeat age after which a worker is not selectable
-- ARGV[4] maxConcurrent
-- ARGV[5] maxLifetime
-- ARGV[6] ttl                     seconds; 0 leaves the TTL as it is
-- ARGV[7..] fields                field, value, field, value… to HSET (none when adopting)
-- Returns {exists, free}: exists 0 when the hash is gone; free 1 when the worker can take a session.
-- @include version
-- @include free
local unpack = unpack or table.unpack -- Lua 5.1 (Redis) and 5.3 (embedded)
local ref = ARGV[1]
local now = tonumber(ARGV[2])
local stale = tonumber(ARGV[3])
local maxConcurrent = tonumber(ARGV[4])
local maxLifetime = tonumber(ARGV[5])
local ttl = tonumber(ARGV[6])

if #ARGV > 6 then
  -- a hash that expired meanwhile is not brought back by a field or two (adoption)
  if #ARGV > 8 or redis.call('EXISTS', KEYS[1]) == 1 then
    local fields = {}
    for i = 7, #ARGV do fields[#fields + 1] = ARGV[i] end
    redis.call('HSET', KEYS[1], unpack(fields))
  end
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[4], ref)
  redis.call('ZREM', KEYS[5], ref)
  return {0, 0}
end
if ttl > 0 then redis.call('EXPIRE', KEYS[1], ttl) end
redis.call('HSETNX', KEYS[2], ref, 0)
redis.call('HSETNX', KEYS[3], ref, 0)

local state = redis.call('HMGET', KEYS[1], 'status', 'lastHeartbeat', 'version')
local beat = heartbeatMs(state[2]) or 0
redis.call('ZADD', KEYS[4], beat, ref)

local live = isLive(beat, now, stale)
local mm = majorMinor(state[3])
if mm and state[1] == 'available' and live then
  local seen = tonumber(redis.call('HGET', KEYS[6], mm))
  if not seen or seen < beat then redis.call('HSET', KEYS[6], mm, beat) end
end

local active = tonumber(redis.call('HGET', KEYS[2], ref)) or 0
local lifetime = tonumber(redis.call('HGET', KEYS[3], ref)) or 0
local isFree = freeWorkerRule(now, stale, maxConcurrent, maxLifetime)
if isFree(state[1], beat, active, lifetime) then
  redis.call('ZADD', KEYS[5], versionBand(state[3]) + lifetime, ref)
  return {1, 1}
end
redis.call('ZREM', KEYS[5], ref)
return {1, 0}
