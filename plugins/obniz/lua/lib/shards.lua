-- shards: coord's per-device keys (device index, claims, pending-onInstall marks) are
-- each split over 64 keys by a hash of the obnizId (shards.ts computes the same), so no
-- key grows to a million entries: Redis grows a table in one step, and at that size the
-- step took over a millisecond inside a script call.

local byte = string.byte

-- the key of device `id` among the shards that start with `head`
local function shardKey(head, id)
  local h = 0
  for i = 1, #id do h = (h * 31 + byte(id, i)) % 2147483647 end
  return head .. (h % 64)
end
