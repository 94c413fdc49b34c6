-- terminateSession: a session ends, exactly once, atomically: it moves from
-- sessions.active to sessions.terminated, terminatedAt is set, and the slot it
-- held goes back to its orchestrator's slots.reclaimed (the slot ID names the
-- orchestrator: '<orchestratorId>:<n>'). Optionally logs why, and counts a
-- reclaimed slot as dead or orphaned.
-- KEYS[1] active = sessionsActive
-- KEYS[2] terminated = sessionsTerminated
-- KEYS[3] status = sessionStatus
-- KEYS[4] slot = sessionSlot
-- KEYS[5] log = sessionLog
-- KEYS[6] total = sessionsTotal
-- KEYS[7] duration = sessionsDuration
-- KEYS[8] counts = logCounts          metrics:sessions:log:{level} of the code's level
-- KEYS[9] reclaimedTotal = slotsReclaimedTotal
-- ARGV[1] orchestratorHead @head orchestrator
-- ARGV[2] sessionId
-- ARGV[3] now                         RFC 3339
-- ARGV[4] state                       the state it leaves: queued, pending or alive
-- ARGV[5] stateSeconds                time spent in that state
-- ARGV[6] reason                      '' | 'dead' | 'orphaned': counts the reclaimed slot
-- ARGV[7] component
-- ARGV[8] level
-- ARGV[9] code                        '' for no log entry
-- ARGV[10] meta
-- ARGV[11] maxLen
-- Returns {terminated, slot}: terminated 0 when it had already ended; slot the slot given back or ''.
local sid = ARGV[2]
if redis.call('SMOVE', KEYS[1], KEYS[2], sid) == 0 then return {0, ''} end
redis.call('HSET', KEYS[3], 'terminatedAt', ARGV[3])
redis.call('HINCRBY', KEYS[6], 'terminated', 1)
redis.call('HINCRBYFLOAT', KEYS[7], ARGV[4], ARGV[5])
if ARGV[9] ~= '' then
  redis.call('XADD', KEYS[5], 'MAXLEN', ARGV[11], '*', 'component', ARGV[7], 'level', ARGV[8], 'code', ARGV[9], 'meta', ARGV[10])
  redis.call('HINCRBY', KEYS[8], ARGV[9], 1)
end
local given = ''
local slot = redis.call('GET', KEYS[4])
local owner = slot and string.match(slot, '^(.+):%d+$')
if owner then
  local held = ARGV[1] .. owner .. ':slots.held'
  if redis.call('HGET', held, slot) == sid then
    redis.call('HDEL', held, slot)
    redis.call('RPUSH', ARGV[1] .. owner .. ':slots.reclaimed', slot)
    if ARGV[6] ~= '' then redis.call('HINCRBY', KEYS[9], ARGV[6], 1) end
    given = slot
  end
end
return {1, given}
