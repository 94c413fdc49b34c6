-- markRunning: a worker records that its users' tasks run, a batch of users at
-- once (a command batch's). A user is marked running only while it is still
-- assigned to this worker: one removed or reassigned in the meantime is not
-- brought back. (Stopped users leave the active set by a plain SREM.)
-- KEYS[1] active = workerActiveUsers
-- KEYS[2..] users = user      user:<id> of each user of ARGV[3..], in that order
-- ARGV[1] workerId
-- ARGV[2] now
-- ARGV[3..] userIds
-- Returns how many of the users it marked running.
-- @include sets
local marked = {}
for i = 3, #ARGV do
  local userKey = KEYS[i - 1]
  if redis.call('HGET', userKey, 'worker') == ARGV[1] then
    redis.call('HSET', userKey, 'status', 'running', 'updated_at', ARGV[2])
    marked[#marked + 1] = ARGV[i]
  end
end
addAll(KEYS[1], marked)
return #marked
