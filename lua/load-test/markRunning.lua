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
local unpack = unpack or table.unpack -- Lua 5.1 (Redis) and 5.3 (embedded)
local marked = {}
local function addMarked()
  if #marked > 0 then redis.call('SADD', KEYS[1], unpack(marked)) end
end
local count = 0
for i = 3, #ARGV do
  local userKey = KEYS[i - 1]
  if redis.call('HGET', userKey, 'worker') == ARGV[1] then
    redis.call('HSET', userKey, 'status', 'running', 'updated_at', ARGV[2])
    marked[#marked + 1] = ARGV[i]
    count = count + 1
    if #marked == 1000 then -- unpack's limit on Redis is about 8000 values
      addMarked()
      marked = {}
    end
  end
end
addMarked()
return count
