-- removeWorker: a worker leaves (after draining) or is reaped: its hash, its
-- counter fields and its index entries go together; the last worker of its type
-- takes the type's versions with it, so a clean stop leaves no key behind.
-- KEYS[1] worker
-- KEYS[2] active = activeConnections
-- KEYS[3] lifetime = lifetimeConnections
-- KEYS[4] workerIndex
-- KEYS[5] freeIndex
-- KEYS[6] versions                the type's versions served
-- ARGV[1] ref                     '{browserType}:{workerId}'
-- Returns 1 when anything was removed.
local removed = redis.call('DEL', KEYS[1])
removed = removed + redis.call('HDEL', KEYS[2], ARGV[1])
removed = removed + redis.call('HDEL', KEYS[3], ARGV[1])
removed = removed + redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[1])
if redis.call('ZCARD', KEYS[4]) == 0 then redis.call('DEL', KEYS[6]) end
if removed > 0 then return 1 end
return 0
