-- scheduleSession: the orchestrator took a session from its backlog into
-- pending (reliable queue) and schedules its node (SCHED): pendingAt, the
-- orchestrator's ID on session:ID:orchestrator (what the manager waits on), counted.
-- A session that is no longer active leaves pending at once.
-- KEYS[1] active = sessionsActive
-- KEYS[2] pending
-- KEYS[3] status = sessionStatus
-- KEYS[4] orchestrator = sessionOrchestrator
-- KEYS[5] log = sessionLog
-- KEYS[6] total = sessionsTotal
-- KEYS[7] duration = sessionsDuration
-- KEYS[8] counts = logCounts          metrics:sessions:log:info
-- ARGV[1] sessionId
-- ARGV[2] orchestratorId
-- ARGV[3] now                         RFC 3339
-- ARGV[4] queuedSeconds               queuedAt → now
-- ARGV[5] meta
-- ARGV[6] maxLen
-- Returns 1 when scheduled now, 2 when it had been scheduled before (a restart), 0 when the session is gone.
local sid = ARGV[1]
if redis.call('SISMEMBER', KEYS[1], sid) == 0 then
  redis.call('LREM', KEYS[2], 0, sid)
  return 0
end
if redis.call('HEXISTS', KEYS[3], 'pendingAt') == 1 then return 2 end
redis.call('HSET', KEYS[3], 'pendingAt', ARGV[3])
redis.call('RPUSH', KEYS[4], ARGV[2])
redis.call('XADD', KEYS[5], 'MAXLEN', ARGV[6], '*', 'component', 'orchestrator', 'level', 'info', 'code', 'SCHED', 'meta', ARGV[5])
redis.call('HINCRBY', KEYS[6], 'pending', 1)
redis.call('HINCRBYFLOAT', KEYS[7], 'queued', ARGV[4])
redis.call('HINCRBY', KEYS[8], 'SCHED', 1)
return 1
