-- attachSession: the client of a session created with POST /v1/sessions
-- attaches, at any proxy. Only a pending session attaches, once: its lease
-- moves from the proxy that created it to the one that relays it (the same
-- proxy, or another behind a load balancer), so the reaper of either finds it.
-- KEYS[1] session
-- KEYS[2] fromLeases = leases     the leases of the proxy that created it
-- KEYS[3] toLeases = leases       the leases of the proxy attaching it
-- ARGV[1] sessionId
-- ARGV[2] fromProxy               the creating proxy, as read before the call
-- ARGV[3] toProxy
-- ARGV[4] nowMs
-- Returns {'ok', workerRef}, or {why}: 'absent', 'expired', 'lost' (its lease was reaped), or the status it has.
local state = redis.call('HMGET', KEYS[1], 'status', 'proxy_id', 'expires_ms')
if not state[1] then return {'absent'} end
if state[1] ~= 'pending' then return {state[1]} end
if state[2] ~= ARGV[2] then return {'moved'} end
if tonumber(ARGV[4]) > tonumber(state[3]) then return {'expired'} end
local ref = redis.call('HGET', KEYS[2], ARGV[1])
if not ref then
  redis.call('HSET', KEYS[1], 'status', 'failed', 'ended_ms', ARGV[4], 'end_reason', 'its slot was given back before the client attached (the proxy that created it stopped)')
  return {'lost'}
end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ref)
redis.call('HSET', KEYS[1], 'status', 'running', 'proxy_id', ARGV[3], 'started_ms', ARGV[4])
return {'ok', ref}
