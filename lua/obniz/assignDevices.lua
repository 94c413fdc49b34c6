-- assignDevices: the seed's assignment for a batch of devices. No alive slave:
-- NO_ACCEPTABLE_WORKER; already in a distribution list: ALREADY_INSTALLED; else the
-- alive slave with the fewest assignments (ties: first by name) gets it, as
-- {"install":…,"instanceName":…,"updatedMillisecond":…}, marked new for onInstall.
-- KEYS[1] slaveIndex
-- KEYS[2] newInstalls
-- KEYS[3] uninstalls
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] nowMs
-- ARGV[5] deadAfterMs
-- ARGV[6..] devices                    obnizId, install JSON, obnizId, install JSON, …
-- Returns a flat list: obnizId, 'ok', slave | obnizId, 'err', code
local workersHead, slaveHead, slaveTail = ARGV[1], ARGV[2], ARGV[3]
local now, nowText, deadAfter = tonumber(ARGV[4]), ARGV[4], tonumber(ARGV[5])

local function alive(name)
  local beat = tonumber(redis.call('GET', slaveHead .. name .. slaveTail))
  if not beat then return false end
  if beat < 100000000000 then beat = beat * 1000.0 end -- seconds; a float: the embedded Lua has 32-bit integers
  return beat + deadAfter >= now
end

local members = redis.call('ZRANGE', KEYS[1], 0, -1)
table.sort(members)
local living, counts, total = {}, {}, 0
for _, name in ipairs(members) do
  local count = redis.call('HLEN', workersHead .. name)
  total = total + count
  if alive(name) then
    living[#living + 1] = name
    counts[name] = count
  end
end

local out = {}
local n = (#ARGV - 5) / 2
if #living == 0 then
  for i = 0, n - 1 do
    out[#out + 1] = ARGV[6 + 2 * i]
    out[#out + 1] = 'err'
    out[#out + 1] = 'NO_ACCEPTABLE_WORKER'
  end
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
  for _, name in ipairs(members) do
    if redis.call('HEXISTS', workersHead .. name, id) == 1 then return name end
  end
  return nil
end

-- decide every device first, then write with one command per slave list and per set
local unpack = unpack or table.unpack
local taken, fields, placed, quoted = {}, {}, {}, {}
for _, name in ipairs(living) do quoted[name] = cjson.encode(name) end
for i = 0, n - 1 do
  local id, install = ARGV[6 + 2 * i], ARGV[7 + 2 * i]
  out[#out + 1] = id
  if taken[id] or ownerOf(id) then
    out[#out + 1] = 'err'
    out[#out + 1] = 'ALREADY_INSTALLED'
  else
    local best
    for _, name in ipairs(living) do
      if not best or counts[name] < counts[best] then best = name end
    end
    counts[best] = counts[best] + 1
    taken[id] = true
    placed[#placed + 1] = id
    fields[best] = fields[best] or {}
    local list = fields[best]
    list[#list + 1] = id
    list[#list + 1] = '{"install":' .. install .. ',"instanceName":' .. quoted[best] .. ',"updatedMillisecond":' .. nowText .. '}'
    out[#out + 1] = 'ok'
    out[#out + 1] = best
  end
end
for name, list in pairs(fields) do redis.call('HSET', workersHead .. name, unpack(list)) end
if #placed > 0 then
  redis.call('SADD', KEYS[2], unpack(placed))
  redis.call('SREM', KEYS[3], unpack(placed))
end
return out
