-- reapWorkers: removes the workers of one browser type whose heartbeat is older
-- than the stale threshold, with their counter fields. Reads only the stale end
-- of workerIndex; a worker whose hash shows a newer heartbeat than its index
-- score (another implementation heartbeats its hash only) is rescored, not reaped.
-- KEYS[1] active = activeConnections
-- KEYS[2] lifetime = lifetimeConnections
-- KEYS[3] workerIndex
-- KEYS[4] freeIndex
-- ARGV[1] workerHead @head worker
-- ARGV[2] nowMs
-- ARGV[3] staleMs
-- ARGV[4] limit                   most workers looked at in one call
-- Returns the refs reaped.
-- @include heartbeat
local cutoff = tonumber(ARGV[2]) - tonumber(ARGV[3])
local reaped = {}
for _, ref in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. cutoff, 'LIMIT', 0, tonumber(ARGV[4]))) do
  local beat = heartbeatMs(redis.call('HGET', ARGV[1] .. ref, 'lastHeartbeat'))
  if isLive(beat, tonumber(ARGV[2]), tonumber(ARGV[3])) then
    redis.call('ZADD', KEYS[3], beat, ref)
  else
    redis.call('DEL', ARGV[1] .. ref)
    redis.call('HDEL', KEYS[1], ref)
    redis.call('HDEL', KEYS[2], ref)
    redis.call('ZREM', KEYS[3], ref)
    redis.call('ZREM', KEYS[4], ref)
    reaped[#reaped + 1] = ref
  end
end
return reaped
