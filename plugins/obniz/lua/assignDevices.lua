-- assignDevices: writes an assignment the caller planned (scripts.ts: the least-loaded
-- alive slave per device, obniz-app-sdk's rule, from the list lengths it read). Checked
-- here per device in O(1), so a call's cost grows with its batch, not with the fleet:
-- in a list already (the device index, confirmed in that list): ALREADY_INSTALLED; its
-- planned slave not alive now: NOT_ALIVE (the caller plans it again). Written as
-- {"install":…,"instanceName":…,"updatedMillisecond":…}, marked new for onInstall when
-- that slave is a coord slave (an SDK slave never calls onInstall nor clears the mark).
-- KEYS[1] deviceIndex
-- KEYS[2] listStamps
-- KEYS[3] newInstalls
-- KEYS[4] uninstalls
-- KEYS[5] coordSlaves
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] nowMs
-- ARGV[5] deadAfterMs
-- ARGV[6..] devices                    obnizId, slave, install JSON, obnizId, slave, install JSON, …
-- Returns the devices refused, as a flat list: position in the batch (1 the first), 'ALREADY_INSTALLED'
-- | 'NOT_ALIVE'. Every device not in it was written to its planned slave (a reply of three items a
-- device cost Redis 0.3 µs a device to build, and the manager a million of them to read at a first sync).
-- @include heartbeat
-- @include lists
-- @include entry
-- @include installs
local workersHead, nowText = ARGV[1], ARGV[4]
local alive = slaveAliveCheck(ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]))
local isCoord = coordSlaveCheck(KEYS[5])

-- decide every device first, then write with one command per slave list and per key
local unpack = unpack or table.unpack
local out, taken, fields, indexed, placed, fresh, touched = {}, {}, {}, {}, {}, {}, {}
local position = 0
for i = 6, #ARGV, 3 do
  local id, slave, install = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local refused
  position = position + 1
  if taken[id] or listHolding(KEYS[1], workersHead, id) then
    refused = 'ALREADY_INSTALLED'
  elseif not alive(slave) then
    refused = 'NOT_ALIVE'
  end
  if refused then
    out[#out + 1] = position
    out[#out + 1] = refused
  else
    taken[id] = true
    placed[#placed + 1] = id
    if isCoord(slave) then fresh[#fresh + 1] = id end
    local list = fields[slave]
    if not list then
      list = {}
      fields[slave] = list
      touched[slave] = true
    end
    list[#list + 1] = id
    list[#list + 1] = listEntry(install, slave, nowText)
    indexed[#indexed + 1] = id
    indexed[#indexed + 1] = slave
  end
end
for name, list in pairs(fields) do redis.call('HSET', workersHead .. name, unpack(list)) end
if #indexed > 0 then redis.call('HSET', KEYS[1], unpack(indexed)) end
if #fresh > 0 then redis.call('SADD', KEYS[3], unpack(fresh)) end
if #placed > 0 then redis.call('SREM', KEYS[4], unpack(placed)) end
stampLists(KEYS[2], touched)
return out
