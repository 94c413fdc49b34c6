-- announceSlot: an orchestrator put a slot back on its slots.available; each
-- live manager (heard from since sinceMs) gets the orchestrator's ID on its
-- slots.freed list, so a manager blocks on that one list rather than naming
-- every orchestrator's slots.available in each BLPOP (a cost that grew with the
-- fleet). The list expires with a manager that stops reading it, and is capped:
-- a notice lost only delays a slot until the manager's next sweep.
-- KEYS[1] managers
-- ARGV[1] freedHead @head managerFreed
-- ARGV[2] freedTail                   what follows the manager ID in a slots.freed key
-- ARGV[3] orchestratorId
-- ARGV[4] sinceMs                     managers whose heartbeat is older are not told
-- ARGV[5] ttl                         seconds
-- ARGV[6] cap                         notices kept per manager
-- Returns how many managers were told.
local told = 0
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[4], '+inf')) do
  local key = ARGV[1] .. id .. ARGV[2]
  redis.call('RPUSH', key, ARGV[3])
  redis.call('LTRIM', key, -tonumber(ARGV[6]), -1)
  redis.call('EXPIRE', key, ARGV[5])
  told = told + 1
end
return told
