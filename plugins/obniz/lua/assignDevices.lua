-- assignDevices: writes an assignment the caller planned (scripts.ts: the least-loaded
-- alive slave per device, obniz-app-sdk's rule, from the list lengths it read). Checked
-- here per device in O(1), so a call's cost grows with its batch, not with the fleet:
-- in a list already (the device index, confirmed in that list): ALREADY_INSTALLED; its
-- planned slave not alive now: NOT_ALIVE (the caller plans it again). Written as
-- {"install":…,"instanceName":…,"updatedMillisecond":…}, marked new for onInstall when
-- that slave is a coord slave (an SDK slave never calls onInstall nor clears the mark).
-- KEYS[1] listStamps
-- KEYS[2] uninstalls
-- KEYS[3] coordSlaves
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] nowMs
-- ARGV[5] deadAfterMs
-- ARGV[6] indexHead @head deviceIndex
-- ARGV[7] newHead @head newInstalls
-- ARGV[8..] devices                    obnizId, shard, slave, install JSON, obnizId, shard, …
-- Returns a flat list: obnizId, 'ok', slave | obnizId, 'err', 'ALREADY_INSTALLED' | 'NOT_ALIVE'
-- @include shards
-- @include heartbeat
-- @include lists
-- @include entry
-- @include results
-- @include installs
local workersHead, nowText = ARGV[1], ARGV[4]
local indexKey, newKey = shardKeys(ARGV[6]), shardKeys(ARGV[7])
local alive = slaveAliveCheck(ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]))
local isCoord = coordSlaveCheck(KEYS[3])

-- decide every device first, then write with one command per slave list and per shard
local unpack = unpack or table.unpack
local out, taken, fields, indexed, fresh, placed, touched = {}, {}, {}, {}, {}, {}, {}
for i = 8, #ARGV, 4 do
  local id, shard, slave, install = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  if taken[id] or listHolding(indexKey(shard), workersHead, id) then
    pushResult(out, id, nil, 'ALREADY_INSTALLED')
  elseif not alive(slave) then
    pushResult(out, id, nil, 'NOT_ALIVE')
  else
    taken[id] = true
    placed[#placed + 1] = id
    if isCoord(slave) then
      local marks = group(fresh, newKey(shard))
      marks[#marks + 1] = id
    end
    touched[slave] = true
    local list = group(fields, workersHead .. slave)
    list[#list + 1] = id
    list[#list + 1] = listEntry(install, slave, nowText)
    local index = group(indexed, indexKey(shard))
    index[#index + 1] = id
    index[#index + 1] = slave
    pushResult(out, id, slave)
  end
end
for key, list in pairs(fields) do redis.call('HSET', key, unpack(list)) end
for key, list in pairs(indexed) do redis.call('HSET', key, unpack(list)) end
for key, marks in pairs(fresh) do redis.call('SADD', key, unpack(marks)) end
if #placed > 0 then redis.call('SREM', KEYS[2], unpack(placed)) end
stampLists(KEYS[1], touched)
return out
