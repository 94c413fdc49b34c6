-- markAlive: the node answers and the client is served (NALIVE): aliveAt,
-- counted, time spent pending, and the startup histogram (queuedAt → aliveAt);
-- the node's announcement on session:ID:ready has served its purpose.
-- KEYS[1] active = sessionsActive
-- KEYS[2] status = sessionStatus
-- KEYS[3] log = sessionLog
-- KEYS[4] total = sessionsTotal
-- KEYS[5] duration = sessionsDuration
-- KEYS[6] count = startupCount
-- KEYS[7] sum = startupSum
-- KEYS[8] buckets = startupBuckets
-- KEYS[9] counts = logCounts          metrics:sessions:log:info
-- KEYS[10] ready = sessionReady       the node's announcement, consumed here
-- ARGV[1] sessionId
-- ARGV[2] now                         RFC 3339
-- ARGV[3] pendingSeconds              pendingAt → now
-- ARGV[4] startupSeconds              queuedAt → now
-- ARGV[5] meta
-- ARGV[6] maxLen
-- ARGV[7..] bounds                    histogram upper bounds in seconds, and '+Inf'
-- Returns 1, or 0 when the session is no longer active.
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], 'aliveAt', ARGV[2])
redis.call('DEL', KEYS[10])
redis.call('HINCRBY', KEYS[4], 'alive', 1)
redis.call('HINCRBYFLOAT', KEYS[5], 'pending', ARGV[3])
redis.call('INCR', KEYS[6])
redis.call('INCRBYFLOAT', KEYS[7], ARGV[4])
local startup = tonumber(ARGV[4])
for i = 7, #ARGV do
  local bound = ARGV[i]
  if bound == '+Inf' or startup <= tonumber(bound) then redis.call('HINCRBY', KEYS[8], bound, 1) end
end
redis.call('XADD', KEYS[3], 'MAXLEN', ARGV[6], '*', 'component', 'manager', 'level', 'info', 'code', 'NALIVE', 'meta', ARGV[5])
redis.call('HINCRBY', KEYS[9], 'NALIVE', 1)
return 1
