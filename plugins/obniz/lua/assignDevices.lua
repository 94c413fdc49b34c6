-- assignDevices: obniz-app-sdk's assignment for a batch of devices. No alive slave:
-- NO_ACCEPTABLE_WORKER; already in a distribution list: ALREADY_INSTALLED; else the
-- alive slave with the fewest assignments (ties: first by name) gets it, as
-- {"install":…,"instanceName":…,"updatedMillisecond":…}, marked new for onInstall when
-- that slave is a coord slave (an SDK slave never calls onInstall nor clears the mark).
-- KEYS[1] slaveIndex
-- KEYS[2] newInstalls
-- KEYS[3] uninstalls
-- KEYS[4] coordSlaves
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] nowMs
-- ARGV[5] deadAfterMs
-- ARGV[6..] devices                    obnizId, install JSON, obnizId, install JSON, …
-- Returns a flat list: obnizId, 'ok', slave | obnizId, 'err', code
-- @include heartbeat
-- @include slaves
-- @include entry
-- @include results
-- @include installs
local workersHead, nowText = ARGV[1], ARGV[4]
local alive = slaveAliveCheck(ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]))

local members = redis.call('ZRANGE', KEYS[1], 0, -1)
table.sort(members)
local living, counts, total = slaveLoads(members, alive, workersHead)

local out = {}
local n = (#ARGV - 5) / 2
if #living == 0 then
  for i = 0, n - 1 do pushResult(out, ARGV[6 + 2 * i], nil, 'NO_ACCEPTABLE_WORKER') end
  return out
end

-- who holds a device now: one HEXISTS per slave, or, for a big batch, every list read once
local owners
if n * #members > total then
  owners = {}
  for _, name in ipairs(members) do
    for _, id in ipairs(redis.call('HKEYS', workersHead .. name)) do owners[id] = name end
  end
end
local function ownerOf(id)
  if owners then return owners[id] end
  return listHolding(members, workersHead, id)
end

-- decide every device first, then write with one command per slave list and per set
local unpack = unpack or table.unpack
local isCoord = coordSlaveCheck(KEYS[4])
local taken, fields, placed, fresh = {}, {}, {}, {}
for i = 0, n - 1 do
  local id, install = ARGV[6 + 2 * i], ARGV[7 + 2 * i]
  if taken[id] or ownerOf(id) then
    pushResult(out, id, nil, 'ALREADY_INSTALLED')
  else
    local best = leastLoaded(living, counts)
    counts[best] = counts[best] + 1
    taken[id] = true
    placed[#placed + 1] = id
    if isCoord(best) then fresh[#fresh + 1] = id end
    fields[best] = fields[best] or {}
    local list = fields[best]
    list[#list + 1] = id
    list[#list + 1] = listEntry(install, best, nowText)
    pushResult(out, id, best)
  end
end
for name, list in pairs(fields) do redis.call('HSET', workersHead .. name, unpack(list)) end
if #fresh > 0 then redis.call('SADD', KEYS[2], unpack(fresh)) end
if #placed > 0 then redis.call('SREM', KEYS[3], unpack(placed)) end
return out
