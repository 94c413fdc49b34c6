-- shardLegacyKeys: moves entries the caller found (HSCAN, SSCAN) in one of the single
-- keys an older coord kept (device index, claims, pending-onInstall marks) into their
-- shards, each deleted from the old key in the same step: a process that reads the
-- shards once its start's pass has ended finds every entry that was there when it
-- began. An entry gone from the old key meanwhile is left alone; one already in its
-- shard was written by a newer coord and is kept.
-- KEYS[1] legacyDeviceIndex
-- KEYS[2] legacyClaims
-- KEYS[3] legacyNewInstalls
-- ARGV[1] indexHead @head deviceIndex
-- ARGV[2] claimsHead @head claims
-- ARGV[3] newHead @head newInstalls
-- ARGV[4] kind                         'index' | 'claims' | 'new': which key the entries are of
-- ARGV[5..] devices                    obnizId, shard, obnizId, shard, …
-- Returns how many entries moved.
-- @include shards
local kind, moved = ARGV[4], 0
if kind == 'new' then
  local newKey = shardKeys(ARGV[3])
  for i = 5, #ARGV, 2 do
    if redis.call('SREM', KEYS[3], ARGV[i]) == 1 then
      redis.call('SADD', newKey(ARGV[i + 1]), ARGV[i])
      moved = moved + 1
    end
  end
  return moved
end
local old = kind == 'index' and KEYS[1] or KEYS[2]
local shardKey = shardKeys(kind == 'index' and ARGV[1] or ARGV[2])
for i = 5, #ARGV, 2 do
  local value = redis.call('HGET', old, ARGV[i])
  if value then
    redis.call('HSETNX', shardKey(ARGV[i + 1]), ARGV[i], value)
    redis.call('HDEL', old, ARGV[i])
    moved = moved + 1
  end
end
return moved
