-- terminateSession: a session ends, exactly once, atomically: it moves from
-- sessions.active to sessions.terminated, terminatedAt is set, and the slot it
-- held goes back to its orchestrator's slots.reclaimed (the slot ID names the
-- orchestrator: '<orchestratorId>:<n>', so those two keys are built here from
-- their contract head and tail). Optionally logs why, and counts a reclaimed
-- slot as dead or orphaned. A session not yet served wakes the manager waiting
-- for its node ('ended' on session:ID:ready).
-- KEYS[1] active = sessionsActive
-- KEYS[2] terminated = sessionsTerminated
-- KEYS[3] status = sessionStatus
-- KEYS[4] slot = sessionSlot
-- KEYS[5] log = sessionLog
-- KEYS[6] total = sessionsTotal
-- KEYS[7] duration = sessionsDuration
-- KEYS[8] counts = logCounts          metrics:sessions:log:{level} of the code's level
-- KEYS[9] reclaimedTotal = slotsReclaimedTotal
-- KEYS[10] ready = sessionReady
-- ARGV[1] heldHead @head slotsHeld
-- ARGV[2] heldTail                    what follows the orchestrator ID in a slots.held key
-- ARGV[3] reclaimedHead @head slotsReclaimed
-- ARGV[4] reclaimedTail               what follows the orchestrator ID in a slots.reclaimed key
-- ARGV[5] sessionId
-- ARGV[6] now                         RFC 3339
-- ARGV[7] state                       the state it leaves: queued, pending or alive
-- ARGV[8] stateSeconds                time spent in that state
-- ARGV[9] reason                      '' | 'dead' | 'orphaned': counts the reclaimed slot
-- ARGV[10] component
-- ARGV[11] level
-- ARGV[12] code                       '' for no log entry
-- ARGV[13] meta
-- ARGV[14] maxLen
-- Returns {terminated, slot}: terminated 0 when it had already ended; slot the slot given back or ''.
local sid = ARGV[5]
if redis.call('SMOVE', KEYS[1], KEYS[2], sid) == 0 then return {0, ''} end
if redis.call('HEXISTS', KEYS[3], 'aliveAt') == 0 then redis.call('RPUSH', KEYS[10], 'ended') end
redis.call('HSET', KEYS[3], 'terminatedAt', ARGV[6])
redis.call('HINCRBY', KEYS[6], 'terminated', 1)
redis.call('HINCRBYFLOAT', KEYS[7], ARGV[7], ARGV[8])
if ARGV[12] ~= '' then
  redis.call('XADD', KEYS[5], 'MAXLEN', ARGV[14], '*', 'component', ARGV[10], 'level', ARGV[11], 'code', ARGV[12], 'meta', ARGV[13])
  redis.call('HINCRBY', KEYS[8], ARGV[12], 1)
end
local given = ''
local slot = redis.call('GET', KEYS[4])
local owner = slot and string.match(slot, '^(.+):%d+$')
if owner then
  local held = ARGV[1] .. owner .. ARGV[2]
  if redis.call('HGET', held, slot) == sid then
    redis.call('HDEL', held, slot)
    redis.call('RPUSH', ARGV[3] .. owner .. ARGV[4], slot)
    if ARGV[9] ~= '' then redis.call('HINCRBY', KEYS[9], ARGV[9], 1) end
    given = slot
  end
end
return {1, given}
