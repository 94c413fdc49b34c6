-- queueSession: a new session enters the grid (QUEUED): active, queuedAt,
-- requested capabilities, metadata, downstream, the manager's heartbeat, counted.
-- KEYS[1] active = sessionsActive
-- KEYS[2] status = sessionStatus
-- KEYS[3] capabilities = sessionCapabilities
-- KEYS[4] metadata = sessionMetadata
-- KEYS[5] downstream = sessionDownstream
-- KEYS[6] heartbeat = sessionManagerHeartbeat
-- KEYS[7] log = sessionLog
-- KEYS[8] total = sessionsTotal
-- KEYS[9] counts = logCounts          metrics:sessions:log:info
-- ARGV[1] sessionId
-- ARGV[2] now                         RFC 3339
-- ARGV[3] requested                   the request's capabilities, JSON
-- ARGV[4] name                        '' when not given
-- ARGV[5] build                       '' when not given
-- ARGV[6] clientHost
-- ARGV[7] userAgent
-- ARGV[8] heartbeatTtl                seconds
-- ARGV[9] meta
-- ARGV[10] maxLen
-- Returns 1.
local now = ARGV[2]
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'queuedAt', now)
redis.call('HSET', KEYS[3], 'requested', ARGV[3])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[4], 'name', ARGV[4]) end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[4], 'build', ARGV[5]) end
redis.call('HSET', KEYS[5], 'host', ARGV[6], 'userAgent', ARGV[7], 'lastSeen', now)
redis.call('SET', KEYS[6], now, 'EX', ARGV[8])
redis.call('XADD', KEYS[7], 'MAXLEN', ARGV[10], '*', 'component', 'manager', 'level', 'info', 'code', 'QUEUED', 'meta', ARGV[9])
redis.call('HINCRBY', KEYS[8], 'queued', 1)
redis.call('HINCRBY', KEYS[9], 'QUEUED', 1)
return 1
