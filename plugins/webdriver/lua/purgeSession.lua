-- purgeSession: gc forgets a terminated session and every key it had.
-- KEYS[1] terminated = sessionsTerminated
-- KEYS[2] nodeHeartbeat = sessionNodeHeartbeat
-- KEYS[3] managerHeartbeat = sessionManagerHeartbeat
-- KEYS[4] slot = sessionSlot
-- KEYS[5] orchestrator = sessionOrchestrator
-- KEYS[6] log = sessionLog
-- KEYS[7] status = sessionStatus
-- KEYS[8] capabilities = sessionCapabilities
-- KEYS[9] metadata = sessionMetadata
-- KEYS[10] upstream = sessionUpstream
-- KEYS[11] downstream = sessionDownstream
-- KEYS[12] ready = sessionReady
-- KEYS[13] storage = sessionStorage
-- ARGV[1] sessionId
-- Returns the number of keys deleted.
local deleted = 0
for i = 2, #KEYS do deleted = deleted + redis.call('DEL', KEYS[i]) end
redis.call('SREM', KEYS[1], ARGV[1])
return deleted
