-- slaves: the slaves' distribution lists (workersHead .. name, one hash per slave).

-- the alive slaves of `members` (in that order), the device count of every member's
-- list, and the total of those counts
local function slaveLoads(members, alive, workersHead)
  local living, counts, total = {}, {}, 0
  for _, name in ipairs(members) do
    local count = redis.call('HLEN', workersHead .. name)
    counts[name] = count
    total = total + count
    if alive(name) then living[#living + 1] = name end
  end
  return living, counts, total
end

-- the slave of `names` with the fewest devices (ties: the first), other than `except`; nil when none
local function leastLoaded(names, counts, except)
  local best
  for _, name in ipairs(names) do
    if name ~= except and (not best or counts[name] < counts[best]) then best = name end
  end
  return best
end

-- the first of `members` whose list holds device `id`, or nil
local function listHolding(members, workersHead, id)
  for _, name in ipairs(members) do
    if redis.call('HEXISTS', workersHead .. name, id) == 1 then return name end
  end
  return nil
end
