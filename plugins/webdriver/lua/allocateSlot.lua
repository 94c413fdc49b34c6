-- allocateSlot: the manager popped a slot for a session (NALLOC): the session
-- holds it and waits in the orchestrator's backlog. A session that ended while
-- the manager waited (client left, gc) gets nothing: the slot goes back first in line.
-- KEYS[1] active = sessionsActive
-- KEYS[2] slot = sessionSlot
-- KEYS[3] held = slotsHeld
-- KEYS[4] available = slotsAvailable
-- KEYS[5] backlog
-- KEYS[6] log = sessionLog
-- KEYS[7] counts = logCounts          metrics:sessions:log:info
-- ARGV[1] sessionId
-- ARGV[2] slotId
-- ARGV[3] meta
-- ARGV[4] maxLen
-- Returns 1 when allocated, 0 when the slot was given back.
local sid, slot = ARGV[1], ARGV[2]
if redis.call('SISMEMBER', KEYS[1], sid) == 0 then
  redis.call('LPUSH', KEYS[4], slot)
  return 0
end
redis.call('SET', KEYS[2], slot)
redis.call('HSET', KEYS[3], slot, sid)
redis.call('LPUSH', KEYS[5], sid)
redis.call('XADD', KEYS[6], 'MAXLEN', ARGV[4], '*', 'component', 'manager', 'level', 'info', 'code', 'NALLOC', 'meta', ARGV[3])
redis.call('HINCRBY', KEYS[7], 'NALLOC', 1)
return 1
