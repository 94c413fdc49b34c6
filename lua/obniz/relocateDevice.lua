-- relocateDevice: the seed's relocation of one device, checked in its order: no
-- alive slave: NO_ACCEPTABLE_WORKER; in no list: NOT_INSTALLED; its slave alive and
-- the move not forced: NO_NEED_TO_RELOCATE; no other alive slave:
-- NO_OTHER_ACCEPTABLE_WORKER; else it moves to the least-loaded other alive slave with
-- instanceName and updatedMillisecond rewritten (the install is kept byte for byte).
-- KEYS[1] slaveIndex
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] nowMs
-- ARGV[5] deadAfterMs
-- ARGV[6] obnizId
-- ARGV[7] force                        'true': move it even when its slave is alive
-- Returns {'ok', from, to} | {'err', code}
local workersHead, slaveHead, slaveTail = ARGV[1], ARGV[2], ARGV[3]
local now, nowText, deadAfter = tonumber(ARGV[4]), ARGV[4], tonumber(ARGV[5])
local id = ARGV[6]

local function alive(name)
  local beat = tonumber(redis.call('GET', slaveHead .. name .. slaveTail))
  if not beat then return false end
  if beat < 100000000000 then beat = beat * 1000.0 end -- seconds; a float: the embedded Lua has 32-bit integers
  return beat + deadAfter >= now
end

-- the entry with a new slave and time; the install text is kept as it was written
local function reassigned(value, name)
  local install = string.match(value, '^{"install":(.*),"instanceName":"[^"\\]*","updatedMillisecond":%d+}$')
  if not install then
    local ok, decoded = pcall(cjson.decode, value)
    if not ok or type(decoded) ~= 'table' or decoded.install == nil then return value end
    install = cjson.encode(decoded.install)
  end
  return '{"install":' .. install .. ',"instanceName":' .. cjson.encode(name) .. ',"updatedMillisecond":' .. nowText .. '}'
end

local members = redis.call('ZRANGE', KEYS[1], 0, -1)
table.sort(members)
local living = {}
for _, name in ipairs(members) do
  if alive(name) then living[#living + 1] = name end
end
if #living == 0 then return {'err', 'NO_ACCEPTABLE_WORKER'} end

local owner
for _, name in ipairs(members) do
  if redis.call('HEXISTS', workersHead .. name, id) == 1 then
    owner = name
    break
  end
end
if not owner then return {'err', 'NOT_INSTALLED'} end
if ARGV[7] ~= 'true' and alive(owner) then return {'err', 'NO_NEED_TO_RELOCATE'} end

local best, bestCount
for _, name in ipairs(living) do
  if name ~= owner then
    local count = redis.call('HLEN', workersHead .. name)
    if not best or count < bestCount then best, bestCount = name, count end
  end
end
if not best then return {'err', 'NO_OTHER_ACCEPTABLE_WORKER'} end

local value = redis.call('HGET', workersHead .. owner, id)
redis.call('HSET', workersHead .. best, id, reassigned(value, best))
redis.call('HDEL', workersHead .. owner, id)
return {'ok', owner, best}
