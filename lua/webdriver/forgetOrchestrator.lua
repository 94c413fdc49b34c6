-- forgetOrchestrator: gc forgets an orchestrator whose retain key has expired
-- (no live orchestrator has refreshed it for its whole TTL), with all its keys.
-- KEYS[1] orchestrators
-- ARGV[1] orchestratorHead @head orchestrator
-- ARGV[2] orchestratorId
-- Returns 1 when forgotten, 0 when it is still retained.
local base = ARGV[1] .. ARGV[2]
if redis.call('EXISTS', base .. ':retain') == 1 then return 0 end
redis.call('DEL', base)
for _, suffix in ipairs({ 'heartbeat', 'capabilities:platformName', 'capabilities:browsers', 'slots.reclaimed', 'slots.available', 'slots', 'slots.held', 'backlog', 'pending' }) do
  redis.call('DEL', base .. ':' .. suffix)
end
redis.call('SREM', KEYS[1], ARGV[2])
return 1
