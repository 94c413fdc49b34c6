-- playwright-distributed v0.3.0's worker selector (proxy/internal/redis/selector.lua,
-- mbroton/playwright-distributed at 178d362), restated for bench/selection.mjs with the
-- same Redis calls in the same order, so it costs what the original costs:
--   HGETALL of both counter hashes; for every worker of the type found in the active
--   hash: TTL of its hash and HMGET status, browserType; HINCRBY of both counters.
-- Eligible: TTL > 0, browserType matches, status 'available', active < maxConcurrent,
-- lifetime < maxLifetime. margin = max(1, floor(maxLifetime / workers of the type));
-- best: highest lifetime below maxLifetime - margin, ties to fewer active; fallback:
-- highest lifetime with lifetime + 1 <= maxLifetime, ties to fewer active.
-- Like the original it takes no KEYS and uses the unprefixed key names, and
-- ARGV[1] maxConcurrent, ARGV[2] maxLifetime, ARGV[3] browser type.
-- Run the original instead: PD_SELECTOR=path/to/selector.lua node bench/selection.mjs
local maxConcurrent = tonumber(ARGV[1])
local maxLifetime = tonumber(ARGV[2])
local browserType = ARGV[3]
if browserType ~= 'chromium' and browserType ~= 'firefox' and browserType ~= 'webkit' then return nil end
local head = browserType .. ':'

local function ofType(flat)
  local counts = {}
  for i = 1, #flat, 2 do
    if string.sub(flat[i], 1, #head) == head then counts[flat[i]] = tonumber(flat[i + 1] or 0) end
  end
  return counts
end
local actives = ofType(redis.call('HGETALL', 'cluster:active_connections'))
local lifetimes = ofType(redis.call('HGETALL', 'cluster:lifetime_connections'))
if next(actives) == nil then return nil end

local workers = 0
for _ in pairs(actives) do workers = workers + 1 end
local margin = math.max(1, math.floor(maxLifetime / workers))

local best, bestLifetime, bestActive = nil, -1, math.huge
local fallback, fallbackLifetime, fallbackActive = nil, -1, math.huge
for ref, active in pairs(actives) do
  local key = 'worker:' .. ref
  local ttl = redis.call('TTL', key)
  local state = redis.call('HMGET', key, 'status', 'browserType')
  local lifetime = lifetimes[ref] or 0
  if ttl > 0 and state[2] == browserType and state[1] == 'available' and active < maxConcurrent and lifetime < maxLifetime then
    if lifetime < maxLifetime - margin and (lifetime > bestLifetime or (lifetime == bestLifetime and active < bestActive)) then
      best, bestLifetime, bestActive = ref, lifetime, active
    end
    if lifetime + 1 <= maxLifetime and (lifetime > fallbackLifetime or (lifetime == fallbackLifetime and active < fallbackActive)) then
      fallback, fallbackLifetime, fallbackActive = ref, lifetime, active
    end
  end
end
local chosen = best or fallback
if not chosen then return nil end
redis.call('HINCRBY', 'cluster:active_connections', chosen, 1)
redis.call('HINCRBY', 'cluster:lifetime_connections', chosen, 1)
return chosen
