-- dropWorker: takes a dead worker out of the snapshot: marks it dead, forgets
-- its command stream and sets, and returns its users for reassignment.
-- KEYS[1] workers
-- KEYS[2] status = workerStatus
-- KEYS[3] users = workerUsers
-- KEYS[4] active = workerActiveUsers
-- KEYS[5] commands = workerCommands
-- KEYS[6] ack = workerAck
-- ARGV[1] userHead @head user
-- ARGV[2] workerId
-- ARGV[3] now
-- ARGV[4] keepSeconds   how long the dead worker's status hash stays for the UI
-- Returns the user ids the worker had, or {} when it was already dropped.
if redis.call('SREM', KEYS[1], ARGV[2]) == 0 then return {} end
redis.call('HSET', KEYS[2], 'status', 'dead')
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[4]))
local users = redis.call('SMEMBERS', KEYS[3])
for _, user in ipairs(users) do
  redis.call('HSET', ARGV[1] .. user, 'status', 'reassigned', 'updated_at', ARGV[3])
end
redis.call('DEL', KEYS[3], KEYS[4], KEYS[5], KEYS[6])
return users
