-- reclaimSlots: one pass of an orchestrator's slot reclaim. A slot that is
-- neither free (available, reclaimed) nor held by a session, and was already
-- so at the previous pass (a suspect), is orphaned — a manager took it and
-- died before allocating — and goes back. A slot still held by a session that
-- has ended goes back too. Sessions holding a slot with neither a node nor a
-- manager heartbeat are dead: returned for the caller to terminate.
-- KEYS[1] slots
-- KEYS[2] available = slotsAvailable
-- KEYS[3] reclaimed = slotsReclaimed
-- KEYS[4] held = slotsHeld
-- KEYS[5] active = sessionsActive
-- KEYS[6] reclaimedTotal = slotsReclaimedTotal
-- ARGV[1] nodeHead @head sessionNodeHeartbeat
-- ARGV[2] nodeTail                    what follows the session ID in a heartbeat.node key
-- ARGV[3] managerHead @head sessionManagerHeartbeat
-- ARGV[4] managerTail                 what follows the session ID in a heartbeat.manager key
-- ARGV[5..] suspects                  slots found unheld by the previous pass
-- Returns {orphaned slots, suspects for the next pass, dead session IDs}.
local suspects = {}
for i = 5, #ARGV do suspects[ARGV[i]] = true end
local free = {}
for _, slot in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do free[slot] = true end
for _, slot in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do free[slot] = true end
local orphaned, nextSuspects, dead = {}, {}, {}
for _, slot in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if not free[slot] then
    local sid = redis.call('HGET', KEYS[4], slot)
    if not sid then
      if suspects[slot] then
        redis.call('RPUSH', KEYS[3], slot)
        redis.call('HINCRBY', KEYS[6], 'orphaned', 1)
        orphaned[#orphaned + 1] = slot
      else
        nextSuspects[#nextSuspects + 1] = slot
      end
    elseif redis.call('SISMEMBER', KEYS[5], sid) == 0 then
      redis.call('HDEL', KEYS[4], slot)
      redis.call('RPUSH', KEYS[3], slot)
      redis.call('HINCRBY', KEYS[6], 'orphaned', 1)
      orphaned[#orphaned + 1] = slot
    elseif redis.call('EXISTS', ARGV[1] .. sid .. ARGV[2]) == 0
        and redis.call('EXISTS', ARGV[3] .. sid .. ARGV[4]) == 0 then
      dead[#dead + 1] = sid
    end
  end
end
return {orphaned, nextSuspects, dead}
