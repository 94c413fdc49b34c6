-- lists: the slaves' distribution lists (workersHead .. name, one hash per slave),
-- coord's device index (obnizId → the slave whose list holds it) that lets a script
-- find a device in O(1) instead of asking every list, and the per-list change stamps
-- that let managers re-read only the lists that changed.

-- the slave whose list holds device `id`: `hint` when its list holds it, else the one
-- the device index names when its list holds it (an obniz-app-sdk manager does not keep
-- the index, so an entry may be stale: it is confirmed); nil otherwise
local function listHolding(indexKey, workersHead, id, hint)
  if hint and hint ~= '' and redis.call('HEXISTS', workersHead .. hint, id) == 1 then return hint end
  local owner = redis.call('HGET', indexKey, id)
  if owner and owner ~= hint and redis.call('HEXISTS', workersHead .. owner, id) == 1 then return owner end
  return nil
end

-- bumps the change stamp of every list named in `names` (a set: name → true)
local function stampLists(stampsKey, names)
  for name in pairs(names) do redis.call('HINCRBY', stampsKey, name, 1) end
end
