-- releaseConnection: a relayed session closed. Gives back its lease exactly once:
-- the counter goes down only if the lease was still held, never below zero, and
-- never recreates the field of a worker that was reaped meanwhile.
-- KEYS[1] active = activeConnections
-- KEYS[2] lifetime = lifetimeConnections
-- KEYS[3] freeIndex               freeIndex of the worker's browser type
-- KEYS[4] leases                  the proxy's leases
-- KEYS[5] versions                the type's versions served
-- ARGV[1] workerHead @head worker
-- ARGV[2] connectionId
-- ARGV[3] nowMs
-- ARGV[4] staleMs
-- ARGV[5] maxConcurrent
-- ARGV[6] maxLifetime
-- ARGV[7] rollback                '1' when the session never started (failed dial): the lifetime count goes back too
-- Returns {released, free}: released 0 when the lease was already gone; free 1 when the worker can take a session again.
-- @include version
-- @include free
local ref = redis.call('HGET', KEYS[4], ARGV[2])
if not ref then return {0, 0} end
redis.call('HDEL', KEYS[4], ARGV[2])
if redis.call('HEXISTS', KEYS[1], ref) == 0 then return {1, 0} end
local active = redis.call('HINCRBY', KEYS[1], ref, -1)
if active < 0 then
  redis.call('HSET', KEYS[1], ref, 0)
  active = 0
end

local lifetime = tonumber(redis.call('HGET', KEYS[2], ref)) or 0
if ARGV[7] == '1' and lifetime > 0 then lifetime = redis.call('HINCRBY', KEYS[2], ref, -1) end

local state = redis.call('HMGET', ARGV[1] .. ref, 'status', 'lastHeartbeat', 'version')
local beat = heartbeatMs(state[2])
if not beat then return {1, 0} end
local isFree = freeWorkerRule(tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]))
if isFree(state[1], beat, active, lifetime) then
  redis.call('ZADD', KEYS[3], versionBand(state[3]) + lifetime, ref)
  local mm = majorMinor(state[3])
  if mm then redis.call('HSET', KEYS[5], mm, tonumber(ARGV[3])) end
  return {1, 1}
end
return {1, 0}
