-- shardLegacyKeys: moves one page of entries from the single keys an older coord kept
-- (device index, claims, pending-onInstall marks) into their shards, and deletes each
-- entry from the old key in the same step: a process that reads the shards after its
-- start's pass has ended finds every entry that was there when it began. An entry
-- already in its shard was written by a newer coord: it is kept.
-- KEYS[1] legacyDeviceIndex
-- KEYS[2] legacyClaims
-- KEYS[3] legacyNewInstalls
-- ARGV[1] indexHead @head deviceIndex
-- ARGV[2] claimsHead @head claims
-- ARGV[3] newHead @head newInstalls
-- ARGV[4] indexCursor                  each key's scan cursor; '' skips the key (its scan has ended)
-- ARGV[5] claimsCursor
-- ARGV[6] newCursor
-- ARGV[7] count                        entries a key and call, about
-- Returns each key's next cursor ('' when its scan has ended), then how many entries moved.
-- @include shards
local moved = 0

local function moveHash(key, head, cursor)
  if cursor == '' then return '' end
  local page = redis.call('HSCAN', key, cursor, 'COUNT', ARGV[7])
  local flat = page[2]
  for i = 1, #flat, 2 do
    redis.call('HSETNX', shardKey(head, flat[i]), flat[i], flat[i + 1])
    redis.call('HDEL', key, flat[i])
    moved = moved + 1
  end
  return page[1] == '0' and '' or page[1]
end

local function moveSet(key, head, cursor)
  if cursor == '' then return '' end
  local page = redis.call('SSCAN', key, cursor, 'COUNT', ARGV[7])
  for _, id in ipairs(page[2]) do
    redis.call('SADD', shardKey(head, id), id)
    redis.call('SREM', key, id)
    moved = moved + 1
  end
  return page[1] == '0' and '' or page[1]
end

local index = moveHash(KEYS[1], ARGV[1], ARGV[4])
local claims = moveHash(KEYS[2], ARGV[2], ARGV[5])
local marks = moveSet(KEYS[3], ARGV[3], ARGV[6])
return { index, claims, marks, moved }
