-- scheduleTick: defines a job and queues its tick, unless a scheduler already
-- queued this tick or a later one. Many schedulers may call it for the same
-- tick: the compare-and-set on lastTick lets exactly one of them queue it.
-- KEYS[1] jobs
-- KEYS[2] job
-- KEYS[3] due
-- ARGV[1] jobId
-- ARGV[2] tick        Unix seconds at which the tick starts (a multiple of every)
-- ARGV[3] nowMs
-- ARGV[4] every       seconds
-- ARGV[5] command
-- ARGV[6] timeout     seconds
-- Returns 1 when this call queued the tick, 0 when it was queued already.
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'every', ARGV[4], 'command', ARGV[5], 'timeout', ARGV[6])
local last = tonumber(redis.call('HGET', KEYS[2], 'lastTick'))
if last and last >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[2], 'lastTick', ARGV[2], 'scheduledAt', ARGV[3])
redis.call('LPUSH', KEYS[3], ARGV[1] .. ':' .. ARGV[2])
return 1
