-- forgetOrchestrator: gc forgets an orchestrator whose retain key has expired
-- (no live orchestrator has refreshed it for its whole TTL), with all its keys.
-- KEYS[1] orchestrators
-- KEYS[2] retain = orchestratorRetain
-- KEYS[3] orchestrator
-- KEYS[4] heartbeat = orchestratorHeartbeat
-- KEYS[5] platform = orchestratorPlatformName
-- KEYS[6] browsers = orchestratorBrowsers
-- KEYS[7] reclaimed = slotsReclaimed
-- KEYS[8] available = slotsAvailable
-- KEYS[9] slots
-- KEYS[10] held = slotsHeld
-- KEYS[11] backlog
-- KEYS[12] pending
-- ARGV[1] orchestratorId
-- Returns 1 when forgotten, 0 when it is still retained.
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
for i = 3, #KEYS do redis.call('DEL', KEYS[i]) end
redis.call('SREM', KEYS[1], ARGV[1])
return 1
