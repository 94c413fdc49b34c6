-- removeDevices: devices gone from the list leave their slave's distribution list.
-- A worker still running for one is marked for onUninstall (its slave consumes the
-- mark when it stops it); a claim held by a dead slave is dropped.
-- KEYS[1] slaveIndex
-- KEYS[2] claims
-- KEYS[3] newInstalls
-- KEYS[4] uninstalls
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] nowMs
-- ARGV[5] deadAfterMs
-- ARGV[6..] obnizIds
-- Returns a flat list: obnizId, 'ok', slave | obnizId, 'err', 'NOT_INSTALLED'
-- @include heartbeat
-- @include results
local workersHead = ARGV[1]
local alive = slaveAliveCheck(ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]))

local members = redis.call('ZRANGE', KEYS[1], 0, -1)
local out = {}
for i = 6, #ARGV do
  local id = ARGV[i]
  local owner
  for _, name in ipairs(members) do
    if redis.call('HDEL', workersHead .. name, id) == 1 then owner = name end
  end
  redis.call('SREM', KEYS[3], id)
  local holder = redis.call('HGET', KEYS[2], id)
  if holder and alive(holder) then
    redis.call('SADD', KEYS[4], id)
  elseif holder then
    redis.call('HDEL', KEYS[2], id)
  end
  pushResult(out, id, owner, 'NOT_INSTALLED')
end
return out
