-- relocateSlave: a slave found dead (heartbeat missing, or older than deadAfter) gives
-- all its devices to the alive slaves, each to the least loaded at that moment; then
-- its list, heartbeat and index entry are deleted. The heartbeat is checked here, in
-- the same atomic step, so a slave that came back in time keeps its devices.
-- KEYS[1] slaveIndex
-- KEYS[2] workers                      the slave's distribution list
-- KEYS[3] heartbeat = slaveHeartbeat   the slave's heartbeat key
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] nowMs
-- ARGV[5] deadAfterMs
-- ARGV[6] name
-- Returns {'alive'} | {'err', 'NO_ACCEPTABLE_WORKER'} | {'ok', obnizId, to, obnizId, to, …}
local workersHead, slaveHead, slaveTail = ARGV[1], ARGV[2], ARGV[3]
local now, nowText, deadAfter = tonumber(ARGV[4]), ARGV[4], tonumber(ARGV[5])
local dead = ARGV[6]

local function alive(name)
  local beat = tonumber(redis.call('GET', slaveHead .. name .. slaveTail))
  if not beat then return false end
  if beat < 100000000000 then beat = beat * 1000.0 end -- seconds; a float: the embedded Lua has 32-bit integers
  return beat + deadAfter >= now
end

local function reassigned(value, name)
  local install = string.match(value, '^{"install":(.*),"instanceName":"[^"\\]*","updatedMillisecond":%d+}$')
  if not install then
    local ok, decoded = pcall(cjson.decode, value)
    if not ok or type(decoded) ~= 'table' or decoded.install == nil then return value end
    install = cjson.encode(decoded.install)
  end
  return '{"install":' .. install .. ',"instanceName":' .. cjson.encode(name) .. ',"updatedMillisecond":' .. nowText .. '}'
end

if alive(dead) then return {'alive'} end

local ids = redis.call('HKEYS', KEYS[2])
local out = {'ok'}
if #ids > 0 then
  local members = redis.call('ZRANGE', KEYS[1], 0, -1)
  table.sort(members)
  local living, counts = {}, {}
  for _, name in ipairs(members) do
    if name ~= dead and alive(name) then
      living[#living + 1] = name
      counts[name] = redis.call('HLEN', workersHead .. name)
    end
  end
  if #living == 0 then return {'err', 'NO_ACCEPTABLE_WORKER'} end
  for _, id in ipairs(ids) do
    local best
    for _, name in ipairs(living) do
      if not best or counts[name] < counts[best] then best = name end
    end
    redis.call('HSET', workersHead .. best, id, reassigned(redis.call('HGET', KEYS[2], id), best))
    counts[best] = counts[best] + 1
    out[#out + 1] = id
    out[#out + 1] = best
  end
end
redis.call('DEL', KEYS[2])
redis.call('DEL', KEYS[3])
redis.call('ZREM', KEYS[1], dead)
return out
