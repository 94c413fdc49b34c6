-- removeDevices: devices gone from the list leave their slave's distribution list.
-- A worker still running for one is marked for onUninstall (its slave consumes the
-- mark when it stops it); a claim held by a dead slave is dropped. Each device is
-- found in O(1): in the list the caller read it from, else where the device index says.
-- KEYS[1] deviceIndex
-- KEYS[2] listStamps
-- KEYS[3] claims
-- KEYS[4] newInstalls
-- KEYS[5] uninstalls
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] nowMs
-- ARGV[5] deadAfterMs
-- ARGV[6..] devices                    obnizId, its slave as read ('' when unknown), …
-- Returns a flat list: obnizId, 'ok', slave | obnizId, 'err', 'NOT_INSTALLED'
-- @include heartbeat
-- @include lists
-- @include results
local workersHead = ARGV[1]
local alive = slaveAliveCheck(ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]))

local out, touched = {}, {}
for i = 6, #ARGV, 2 do
  local id = ARGV[i]
  local owner = listHolding(KEYS[1], workersHead, id, ARGV[i + 1])
  if owner then
    redis.call('HDEL', workersHead .. owner, id)
    touched[owner] = true
  end
  redis.call('HDEL', KEYS[1], id)
  redis.call('SREM', KEYS[4], id)
  local holder = redis.call('HGET', KEYS[3], id)
  if holder and alive(holder) then
    redis.call('SADD', KEYS[5], id)
  elseif holder then
    redis.call('HDEL', KEYS[3], id)
  end
  pushResult(out, id, owner, 'NOT_INSTALLED')
end
stampLists(KEYS[2], touched)
return out
