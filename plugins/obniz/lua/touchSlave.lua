-- touchSlave: a slave's heartbeat: obniz-app-sdk's key (Date.now() in ms, with a TTL),
-- coord's slave index, which the scripts read instead of KEYS slave:*:heartbeat, and
-- the coord-slave set. It also looks at a few index members not seen beating since
-- staleBeforeMs: one still beating (an SDK slave) is scored now; one with neither a
-- heartbeat nor a distribution list is gone as the SDK sees it (an SDK manager deleted
-- a dead slave's keys, or it stopped with no devices) and leaves the index and the set.
-- KEYS[1] heartbeat = slaveHeartbeat   this slave's heartbeat key
-- KEYS[2] slaveIndex
-- KEYS[3] coordSlaves
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] name
-- ARGV[5] nowMs
-- ARGV[6] ttlMs
-- ARGV[7] staleBeforeMs                members scored at or before this are looked at
-- Returns how many members were dropped.
local name, now = ARGV[4], ARGV[5]
redis.call('SET', KEYS[1], now, 'PX', ARGV[6])
redis.call('ZADD', KEYS[2], now, name)
redis.call('SADD', KEYS[3], name)

local dropped = 0
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[7], 'LIMIT', 0, 8)) do
  if redis.call('EXISTS', ARGV[2] .. member .. ARGV[3]) == 1 then
    redis.call('ZADD', KEYS[2], now, member)
  elseif redis.call('EXISTS', ARGV[1] .. member) == 0 then
    redis.call('ZREM', KEYS[2], member)
    redis.call('SREM', KEYS[3], member)
    dropped = dropped + 1
  end
end
return dropped
