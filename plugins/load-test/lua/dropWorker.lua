-- dropWorker: takes a dead worker out of the snapshot: marks it dead, forgets
-- its command stream and sets, and returns its users for reassignment.
-- KEYS[1] workers
-- KEYS[2] status = workerStatus
-- ARGV[1] userHead @head user
-- ARGV[2] workerHead @head workerUsers
-- ARGV[3] workerId
-- ARGV[4] now
-- ARGV[5] keepSeconds   how long the dead worker's status hash stays for the UI
-- Returns the user ids the worker had, or {} when it was already dropped.
if redis.call('SREM', KEYS[1], ARGV[3]) == 0 then return {} end
local head = ARGV[2] .. ARGV[3]
redis.call('HSET', KEYS[2], 'status', 'dead')
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[5]))
local users = redis.call('SMEMBERS', head .. ':users')
for _, user in ipairs(users) do
  redis.call('HSET', ARGV[1] .. user, 'status', 'reassigned', 'updated_at', ARGV[4])
end
redis.call('DEL', head .. ':users', head .. ':active_users', head .. ':commands', head .. ':ack')
return users
