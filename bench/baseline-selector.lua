-- playwright-distributed's selector as its design describes it, for comparison only: it reads
-- both counter hashes whole and every worker of the type on every call.
-- KEYS[1] active connections hash, KEYS[2] lifetime connections hash
-- ARGV[1] browser type, ARGV[2] max concurrent, ARGV[3] max lifetime,
-- ARGV[4] now (ms), ARGV[5] stale (ms), ARGV[6] worker key head
local active = redis.call('HGETALL', KEYS[1])
local lifetimeFlat = redis.call('HGETALL', KEYS[2])
local lifetime = {}
for i = 1, #lifetimeFlat, 2 do lifetime[lifetimeFlat[i]] = tonumber(lifetimeFlat[i + 1]) end
local maxConcurrent, maxLifetime = tonumber(ARGV[2]), tonumber(ARGV[3])
local now, stale = tonumber(ARGV[4]), tonumber(ARGV[5])
local eligible, count = {}, 0
for i = 1, #active, 2 do
  local ref = active[i]
  if string.sub(ref, 1, #ARGV[1] + 1) == ARGV[1] .. ':' then
    count = count + 1
    local state = redis.call('HMGET', ARGV[6] .. ref, 'status', 'lastHeartbeat')
    local beat = (tonumber(state[2]) or 0) * 1000
    local a, l = tonumber(active[i + 1]), lifetime[ref] or 0
    if state[1] == 'available' and now - beat <= stale and a < maxConcurrent and l < maxLifetime then
      eligible[#eligible + 1] = {ref = ref, active = a, lifetime = l}
    end
  end
end
if #eligible == 0 then return nil end
local margin = math.max(1, math.floor(maxLifetime / count))
local pick
for _, w in ipairs(eligible) do
  if w.lifetime < maxLifetime - margin and (not pick or w.lifetime > pick.lifetime or (w.lifetime == pick.lifetime and w.active < pick.active)) then pick = w end
end
pick = pick or eligible[1]
redis.call('HINCRBY', KEYS[1], pick.ref, 1)
redis.call('HINCRBY', KEYS[2], pick.ref, 1)
return pick.ref
