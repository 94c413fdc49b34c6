-- sets: adding many members to a set, in slices (unpack's limit on Redis is
-- about 8000 values).

local unpack = unpack or table.unpack -- Lua 5.1 (Redis) and 5.3 (embedded)

local function addAll(key, members)
  for i = 1, #members, 1000 do
    redis.call('SADD', key, unpack(members, i, math.min(i + 999, #members)))
  end
end
