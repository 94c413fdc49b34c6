-- tallyWorkers: the totals /status and /v1/capacity give of a page of one
-- browser type's workers, counted inside Redis: only six numbers come back,
-- not every worker's fields (at 10,000 workers /v1/capacity took ~200 ms
-- when the proxy read them all; bench/scale.mjs). The caller pages through
-- workerIndex, TALLY_PAGE refs a call, so each call stays short.
-- KEYS[1] active = activeConnections
-- ARGV[1] workerHead @head worker
-- ARGV[2] nowMs
-- ARGV[3] staleMs
-- ARGV[4] maxConcurrent           sessions a worker takes at once
-- ARGV[5..] refs                  '{browserType}:{workerId}' each, of one browser type
-- Returns {workers, available, draining, stale, active, free}: live workers are
-- available or draining (any other status, or none); free counts the sessions
-- live available workers could start now.
-- @include heartbeat
local now, staleMs, most = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local available, draining, stale, active, free = 0, 0, 0, 0, 0
for i = 5, #ARGV do
  local ref = ARGV[i]
  local fields = redis.call('HMGET', ARGV[1] .. ref, 'status', 'lastHeartbeat')
  local open = tonumber(redis.call('HGET', KEYS[1], ref)) or 0
  active = active + open
  if not isLive(heartbeatMs(fields[2]), now, staleMs) then
    stale = stale + 1
  elseif fields[1] == 'available' then
    available = available + 1
    free = free + math.max(0, most - open)
  else
    draining = draining + 1
  end
end
return { #ARGV - 4, available, draining, stale, active, free }
