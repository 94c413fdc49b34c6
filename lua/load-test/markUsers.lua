-- markUsers: a worker records that its users' tasks run (or have stopped), for
-- a batch of users at once (a ramp step's, or all of them at the test's end).
-- A user is marked running only while it is still assigned to this worker: one
-- removed or reassigned in the meantime is not brought back.
-- KEYS[1] active = workerActiveUsers
-- KEYS[2..] users = user      user:<id> of each user of ARGV[4..], in that order
-- ARGV[1] workerId
-- ARGV[2] status               'running' or 'stopped'
-- ARGV[3] now
-- ARGV[4..] userIds
-- Returns how many of the users it marked running (0 for 'stopped').
local marked = 0
for i = 4, #ARGV do
  local user, userKey = ARGV[i], KEYS[i - 2]
  if ARGV[2] == 'stopped' then
    redis.call('SREM', KEYS[1], user)
  elseif redis.call('HGET', userKey, 'worker') == ARGV[1] then
    redis.call('HSET', userKey, 'status', 'running', 'updated_at', ARGV[3])
    redis.call('SADD', KEYS[1], user)
    marked = marked + 1
  end
end
return marked
