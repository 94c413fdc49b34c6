-- releaseDevices: a slave gives back the claims of workers it has stopped (onEnd
-- done), so the slave that has the devices now may start them. Claims held by
-- another slave are left alone.
-- KEYS[1] claims                       the first device's shard (on Redis Cluster the call goes to its slot, which the key prefix's hash tag makes every shard's)
-- ARGV[1] name                         the releasing slave
-- ARGV[2] claimsHead @head claims
-- ARGV[3..] devices                    obnizId, shard, obnizId, shard, …
-- Returns how many claims were given back.
-- @include shards
local claimsKey = shardKeys(ARGV[2])
local released = 0
for i = 3, #ARGV, 2 do
  local claims = claimsKey(ARGV[i + 1])
  if redis.call('HGET', claims, ARGV[i]) == ARGV[1] then
    redis.call('HDEL', claims, ARGV[i])
    released = released + 1
  end
end
return released
