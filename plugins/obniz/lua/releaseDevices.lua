-- releaseDevices: a slave gives back the claims of workers it has stopped (onEnd
-- done), so the slave that has the devices now may start them. Claims held by
-- another slave are left alone.
-- KEYS[1] claims
-- ARGV[1] name                         the releasing slave
-- ARGV[2..] obnizIds
-- Returns how many claims were given back.
local released = 0
for i = 2, #ARGV do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    released = released + 1
  end
end
return released
