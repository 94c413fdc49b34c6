-- shards: coord's per-device keys (device index, claims, pending-onInstall marks) are
-- each split over 16 keys, so that none grows to a million entries (Redis grows a
-- table in one step, and at that size the step took over a millisecond inside a
-- script call). The caller names each device's shard (shards.ts), so no script
-- hashes an id.

-- key(shard): the key of that shard among those that start with `head` (each made once a call)
local function shardKeys(head)
  local made = {}
  return function(shard)
    local key = made[shard]
    if not key then
      key = head .. shard
      made[shard] = key
    end
    return key
  end
end

-- the list `name` of `groups` (a table of lists), made when missing
local function group(groups, name)
  local list = groups[name]
  if not list then
    list = {}
    groups[name] = list
  end
  return list
end
