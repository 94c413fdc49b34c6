-- updateDevices: a device's install (its configs…) changed: its entry gets the new
-- install and stays on the same slave, which restarts the worker at its next sync.
-- As obniz-app-sdk's update: no alive slave at all: NO_RUNNING_WORKER (checked first);
-- in no list: NOT_INSTALLED.
-- KEYS[1] slaveIndex
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] nowMs
-- ARGV[5] deadAfterMs
-- ARGV[6..] devices                    obnizId, install JSON, obnizId, install JSON, …
-- Returns a flat list: obnizId, 'ok', slave | obnizId, 'err', 'NOT_INSTALLED' | 'NO_RUNNING_WORKER'
-- @include heartbeat
-- @include slaves
-- @include entry
-- @include results
local workersHead, nowText = ARGV[1], ARGV[4]
local alive = slaveAliveCheck(ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]))
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
local out = {}
local running = false
for _, name in ipairs(members) do
  if alive(name) then
    running = true
    break
  end
end
if not running then
  for i = 6, #ARGV, 2 do pushResult(out, ARGV[i], nil, 'NO_RUNNING_WORKER') end
  return out
end
for i = 6, #ARGV, 2 do
  local id, install = ARGV[i], ARGV[i + 1]
  local owner = listHolding(members, workersHead, id)
  if owner then redis.call('HSET', workersHead .. owner, id, listEntry(install, owner, nowText)) end
  pushResult(out, id, owner, 'NOT_INSTALLED')
end
return out
