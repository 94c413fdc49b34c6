-- relocateAll: doAllRelocate, made exact: with T devices on n alive slaves, every
-- slave ends with floor(T/n) or floor(T/n)+1, the +1 going to the slaves that hold the
-- most now, so the fewest devices move (obniz-app-sdk's loop can stop short of that).
-- Devices of dead slaves are left to the health check. A device not started yet and
-- moved to an SDK slave is no longer marked new.
-- KEYS[1] slaveIndex
-- KEYS[2] newInstalls
-- KEYS[3] coordSlaves
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] nowMs
-- ARGV[5] deadAfterMs
-- Returns {'err', 'NO_WORKER'} | {'ok', moved, name, count, name, count, …} (counts after)
-- @include heartbeat
-- @include entry
-- @include installs
local workersHead, nowText = ARGV[1], ARGV[4]
local isCoord = coordSlaveCheck(KEYS[3])
local alive = slaveAliveCheck(ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]))

local slaves, total = {}, 0
for _, name in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if alive(name) then
    local count = redis.call('HLEN', workersHead .. name)
    slaves[#slaves + 1] = {name = name, count = count}
    total = total + count
  end
end
if #slaves == 0 then return {'err', 'NO_WORKER'} end

table.sort(slaves, function(a, b)
  if a.count ~= b.count then return a.count > b.count end
  return a.name < b.name
end)
local base = math.floor(total / #slaves)
local extra = total - base * #slaves
local givers, takers = {}, {}
for i, s in ipairs(slaves) do
  s.target = base
  if i <= extra then s.target = base + 1 end
  if s.count > s.target then givers[#givers + 1] = s end
  if s.count < s.target then takers[#takers + 1] = s end
end

local moved, t = 0, 1
for _, giver in ipairs(givers) do
  local surplus = giver.count - giver.target
  local ids = redis.call('HKEYS', workersHead .. giver.name)
  local i = 1
  while surplus > 0 do
    local taker = takers[t]
    local id = ids[i]
    local from = workersHead .. giver.name
    redis.call('HSET', workersHead .. taker.name, id, reassignedEntry(redis.call('HGET', from, id), taker.name, nowText))
    redis.call('HDEL', from, id)
    keepMarkOnMove(KEYS[2], isCoord, id, taker.name)
    giver.count, taker.count = giver.count - 1, taker.count + 1
    surplus, i, moved = surplus - 1, i + 1, moved + 1
    if taker.count == taker.target then t = t + 1 end
  end
end

local out = {'ok', moved}
table.sort(slaves, function(a, b) return a.name < b.name end)
for _, s in ipairs(slaves) do
  out[#out + 1] = s.name
  out[#out + 1] = s.count
end
return out
