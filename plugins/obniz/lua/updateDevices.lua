-- updateDevices: a device's install (its configs…) changed: its entry gets the new
-- install and stays on the same slave, which restarts the worker at its next sync.
-- As obniz-app-sdk's update: no alive slave at all: NO_RUNNING_WORKER (checked first,
-- on the one slave the caller found alive); in no list: NOT_INSTALLED. Each device is
-- found in O(1): in the list the caller read it from, else where the device index says.
-- KEYS[1] deviceIndex
-- KEYS[2] listStamps
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] nowMs
-- ARGV[5] deadAfterMs
-- ARGV[6] aliveSlave                   a slave the caller found alive ('' when none)
-- ARGV[7..] devices                    obnizId, its slave as read ('' when unknown), install JSON, …
-- Returns a flat list: obnizId, 'ok', slave | obnizId, 'err', 'NOT_INSTALLED' | 'NO_RUNNING_WORKER'
-- @include heartbeat
-- @include lists
-- @include entry
-- @include results
local workersHead, nowText = ARGV[1], ARGV[4]
local alive = slaveAliveCheck(ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]))
local out = {}
if ARGV[6] == '' or not alive(ARGV[6]) then
  for i = 7, #ARGV, 3 do pushResult(out, ARGV[i], nil, 'NO_RUNNING_WORKER') end
  return out
end
local touched = {}
for i = 7, #ARGV, 3 do
  local id, install = ARGV[i], ARGV[i + 2]
  local owner = listHolding(KEYS[1], workersHead, id, ARGV[i + 1])
  if owner then
    redis.call('HSET', workersHead .. owner, id, listEntry(install, owner, nowText))
    touched[owner] = true
  end
  pushResult(out, id, owner, 'NOT_INSTALLED')
end
stampLists(KEYS[2], touched)
return out
