-- installs: coord's pending-onInstall marks. Only coord slaves call onInstall, so a
-- device is marked new only while it sits, not yet started, on a coord slave: one
-- placed on (or moved to) an obniz-app-sdk slave is installed there, without it.

-- isCoord(name): whether slave `name` is a coord process (a member of the coord-slave set)
local function coordSlaveCheck(coordSlavesKey)
  local known = {}
  return function(name)
    if known[name] == nil then known[name] = redis.call('SISMEMBER', coordSlavesKey, name) == 1 end
    return known[name]
  end
end

-- after device `id` moved to slave `to`: a pending mark goes when `to` is not a coord slave
local function keepMarkOnMove(newInstallsKey, isCoord, id, to)
  if not isCoord(to) then redis.call('SREM', newInstallsKey, id) end
end
