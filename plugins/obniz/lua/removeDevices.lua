-- removeDevices: devices gone from the list leave their slave's distribution list.
-- A worker still running for one is marked for onUninstall (its slave consumes the
-- mark when it stops it); a claim held by a dead slave is dropped. Each device is
-- found in O(1): in the list the caller read it from, else where the device index says.
-- KEYS[1] listStamps
-- KEYS[2] uninstalls
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] nowMs
-- ARGV[5] deadAfterMs
-- ARGV[6] indexHead @head deviceIndex
-- ARGV[7] claimsHead @head claims
-- ARGV[8] newHead @head newInstalls
-- ARGV[9..] devices                    obnizId, shard, its slave as read ('' when unknown), …
-- Returns a flat list: obnizId, 'ok', slave | obnizId, 'err', 'NOT_INSTALLED'
-- @include shards
-- @include heartbeat
-- @include lists
-- @include results
local workersHead = ARGV[1]
local indexKey, claimsKey, newKey = shardKeys(ARGV[6]), shardKeys(ARGV[7]), shardKeys(ARGV[8])
local alive = slaveAliveCheck(ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]))

local out, touched = {}, {}
for i = 9, #ARGV, 3 do
  local id, shard = ARGV[i], ARGV[i + 1]
  local owner = listHolding(indexKey(shard), workersHead, id, ARGV[i + 2])
  if owner then
    redis.call('HDEL', workersHead .. owner, id)
    touched[owner] = true
  end
  redis.call('HDEL', indexKey(shard), id)
  redis.call('SREM', newKey(shard), id)
  local claims = claimsKey(shard)
  local holder = redis.call('HGET', claims, id)
  if holder and alive(holder) then
    redis.call('SADD', KEYS[2], id)
  elseif holder then
    redis.call('HDEL', claims, id)
  end
  pushResult(out, id, owner, 'NOT_INSTALLED')
end
stampLists(KEYS[1], touched)
return out
