-- registerOrchestrator: an orchestrator announces itself (at start and every
-- heartbeat): type, heartbeat, retain, platform, browsers, and exactly `slotCount`
-- slots — a new slot starts available, a slot beyond the count is dropped
-- unless a session holds it (then it is dropped when it comes back).
-- KEYS[1] orchestrators
-- KEYS[2] orchestrator
-- KEYS[3] heartbeat = orchestratorHeartbeat
-- KEYS[4] retain = orchestratorRetain
-- KEYS[5] platform = orchestratorPlatformName
-- KEYS[6] browsers = orchestratorBrowsers
-- KEYS[7] slots
-- KEYS[8] available = slotsAvailable
-- KEYS[9] reclaimed = slotsReclaimed
-- ARGV[1] orchestratorId
-- ARGV[2] type
-- ARGV[3] nowMs
-- ARGV[4] heartbeatTtl                seconds
-- ARGV[5] retainTtl                   seconds
-- ARGV[6] platformName
-- ARGV[7] slotCount
-- ARGV[8..] browsers                  browserName::browserVersion
-- Returns the number of slots added.
local id = ARGV[1]
redis.call('SADD', KEYS[1], id)
redis.call('HSET', KEYS[2], 'type', ARGV[2])
redis.call('SET', KEYS[3], ARGV[3], 'EX', ARGV[4])
redis.call('SET', KEYS[4], ARGV[3], 'EX', ARGV[5])
redis.call('SET', KEYS[5], ARGV[6])
redis.call('DEL', KEYS[6])
for i = 8, #ARGV do redis.call('SADD', KEYS[6], ARGV[i]) end
local count = tonumber(ARGV[7])
local added = 0
for n = 1, count do
  local slot = id .. ':' .. n
  if redis.call('SADD', KEYS[7], slot) == 1 then
    redis.call('RPUSH', KEYS[8], slot)
    added = added + 1
  end
end
for _, slot in ipairs(redis.call('SMEMBERS', KEYS[7])) do
  local n = tonumber(string.match(slot, ':(%d+)$'))
  if not n or n > count then
    redis.call('SREM', KEYS[7], slot)
    redis.call('LREM', KEYS[8], 0, slot)
    redis.call('LREM', KEYS[9], 0, slot)
  end
end
return added
