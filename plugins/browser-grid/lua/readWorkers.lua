-- readWorkers: what /status and /v1 show of a page of workers (their fields and
-- counters), in one call rather than three commands each: at 10,000 workers a
-- proxy answers in about a third of the time. The caller pages through
-- workerIndex, 200 refs a call, so each call stays short (a few ms).
-- KEYS[1] active = activeConnections
-- KEYS[2] lifetime = lifetimeConnections
-- ARGV[1] workerHead @head worker
-- ARGV[2..] refs                  '{browserType}:{workerId}' each
-- Returns, for each ref in turn, 9 values (false where missing): status, lastHeartbeat,
-- wsEndpoint, endpoint, version, bidiEndpoint, startedAt, active, lifetime.
local out = {}
for i = 2, #ARGV do
  local ref = ARGV[i]
  local fields = redis.call('HMGET', ARGV[1] .. ref, 'status', 'lastHeartbeat', 'wsEndpoint', 'endpoint', 'version', 'bidiEndpoint', 'startedAt')
  for j = 1, 7 do out[#out + 1] = fields[j] end
  out[#out + 1] = redis.call('HGET', KEYS[1], ref)
  out[#out + 1] = redis.call('HGET', KEYS[2], ref)
end
return out
