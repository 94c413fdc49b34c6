-- reapProxy: gives back the capacity held by a proxy that stopped heartbeating
-- (killed -9): each of its leases decrements its worker's active count once,
-- never below zero, never recreating a reaped worker's field.
-- KEYS[1] active = activeConnections
-- KEYS[2] proxyIndex
-- KEYS[3] leases                  the dead proxy's leases
-- ARGV[1] proxyId
-- ARGV[2] nowMs
-- ARGV[3] staleMs
-- Returns the number of leases given back, or -1 when the proxy is alive.
local beat = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]))
if beat and tonumber(ARGV[2]) - beat <= tonumber(ARGV[3]) then return -1 end
local leases = redis.call('HGETALL', KEYS[3])
for i = 2, #leases, 2 do
  local ref = leases[i]
  if redis.call('HEXISTS', KEYS[1], ref) == 1 then
    if redis.call('HINCRBY', KEYS[1], ref, -1) < 0 then redis.call('HSET', KEYS[1], ref, 0) end
  end
end
redis.call('DEL', KEYS[3])
redis.call('ZREM', KEYS[2], ARGV[1])
return math.floor(#leases / 2)
