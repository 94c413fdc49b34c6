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
-- ARGV[4] aliveSeconds                aliveAt → now, '' when the session never became alive
-- ARGV[5] reason                      '' | 'dead' | 'orphaned': counts the reclaimed slot
-- ARGV[6] component
-- ARGV[7] level
-- ARGV[8] code                        '' for no log entry
-- ARGV[9] meta
-- ARGV[10] maxLen
-- Returns {terminated, slot}: terminated 0 when it had already ended; slot the slot given back or ''.
local sid = ARGV[2]
if redis.call('SMOVE', KEYS[1], KEYS[2], sid) == 0 then return {0, ''} end
redis.call('HSET', KEYS[3], 'terminatedAt', ARGV[3])
redis.call('HINCRBY', KEYS[6], 'terminated', 1)
if ARGV[4] ~= '' then redis.call('HINCRBYFLOAT', KEYS[7], 'alive', ARGV[4]) end
if ARGV[8] ~= '' then
  redis.call('XADD', KEYS[5], 'MAXLEN', ARGV[10], '*', 'component', ARGV[6], 'level', ARGV[7], 'code', ARGV[8], 'meta', ARGV[9])
  redis.call('HINCRBY', KEYS[8], ARGV[8], 1)
end
local given = ''
local slot = redis.call('GET', KEYS[4])
local owner = slot and string.match(slot, '^(.+):%d+$')
if owner then
  local held = ARGV[1] .. owner .. ':slots.held'
  if redis.call('HGET', held, slot) == sid then
    redis.call('HDEL', held, slot)
    redis.call('RPUSH', ARGV[1] .. owner .. ':slots.reclaimed', slot)
    if ARGV[5] ~= '' then redis.call('HINCRBY', KEYS[9], ARGV[5], 1) end
    given = slot
  end
end
return {1, given}
