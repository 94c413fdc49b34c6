-- touchSlave: a slave's heartbeat: obniz-app-sdk's key (Date.now() in ms, with a TTL)
-- and coord's slave index, which the scripts read instead of KEYS slave:*:heartbeat.
-- KEYS[1] heartbeat = slaveHeartbeat   this slave's heartbeat key
-- KEYS[2] slaveIndex
-- ARGV[1] name
-- ARGV[2] nowMs
-- ARGV[3] ttlMs
-- Returns 1.
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
