-- purgeSession: gc forgets a terminated session and every key it had.
-- KEYS[1] terminated = sessionsTerminated
-- ARGV[1] sessionHead @head sessionStatus
-- ARGV[2] sessionId
-- Returns the number of keys deleted.
local base = ARGV[1] .. ARGV[2] .. ':'
local deleted = 0
for _, suffix in ipairs({ 'heartbeat.node', 'heartbeat.manager', 'slot', 'orchestrator', 'log', 'status', 'capabilities', 'metadata', 'upstream', 'downstream', 'storage' }) do
  deleted = deleted + redis.call('DEL', base .. suffix)
end
redis.call('SREM', KEYS[1], ARGV[2])
return deleted
