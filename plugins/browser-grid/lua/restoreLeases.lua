-- restoreLeases: a proxy files again the sessions it relays right now. After a
-- Redis restarted empty (or a lost lease), each live session missing from the
-- proxy's leases gets its lease back and counts again in its worker's active
-- count, so limits and drains hold. Sessions whose lease is there are untouched.
-- KEYS[1] active = activeConnections
-- KEYS[2] leases                  the proxy's leases
-- ARGV[1..] sessions              connectionId, ref, connectionId, ref…
-- Returns the connection ids restored.
local restored = {}
for i = 1, #ARGV, 2 do
  if redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1]) == 1 then
    redis.call('HINCRBY', KEYS[1], ARGV[i + 1], 1)
    restored[#restored + 1] = ARGV[i]
  end
end
return restored
