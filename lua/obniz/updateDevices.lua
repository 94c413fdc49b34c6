-- updateDevices: a device's install (its configs…) changed: its entry gets the new
-- install and stays on the same slave, which restarts the worker at its next sync.
-- KEYS[1] slaveIndex
-- ARGV[1] workersHead @head workers
-- ARGV[2] nowMs
-- ARGV[3..] devices                    obnizId, install JSON, obnizId, install JSON, …
-- Returns a flat list: obnizId, 'ok', slave | obnizId, 'err', 'NOT_INSTALLED'
local workersHead, nowText = ARGV[1], ARGV[2]
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
local out = {}
for i = 3, #ARGV, 2 do
  local id, install = ARGV[i], ARGV[i + 1]
  local owner
  for _, name in ipairs(members) do
    if redis.call('HEXISTS', workersHead .. name, id) == 1 then
      owner = name
      break
    end
  end
  out[#out + 1] = id
  if owner then
    redis.call('HSET', workersHead .. owner, id,
      '{"install":' .. install .. ',"instanceName":' .. cjson.encode(owner) .. ',"updatedMillisecond":' .. nowText .. '}')
    out[#out + 1] = 'ok'
    out[#out + 1] = owner
  else
    out[#out + 1] = 'err'
    out[#out + 1] = 'NOT_INSTALLED'
  end
end
return out
