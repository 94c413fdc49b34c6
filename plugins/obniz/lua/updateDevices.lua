-- updateDevices: a device's install (its configs…) changed: its entry gets the new
-- install and stays on the same slave, which restarts the worker at its next sync.
-- KEYS[1] slaveIndex
-- ARGV[1] workersHead @head workers
-- ARGV[2] nowMs
-- ARGV[3..] devices                    obnizId, install JSON, obnizId, install JSON, …
-- Returns a flat list: obnizId, 'ok', slave | obnizId, 'err', 'NOT_INSTALLED'
-- @include slaves
-- @include entry
-- @include results
local workersHead, nowText = ARGV[1], ARGV[2]
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
local out = {}
for i = 3, #ARGV, 2 do
  local id, install = ARGV[i], ARGV[i + 1]
  local owner = listHolding(members, workersHead, id)
  if owner then redis.call('HSET', workersHead .. owner, id, listEntry(install, owner, nowText)) end
  pushResult(out, id, owner, 'NOT_INSTALLED')
end
return out
