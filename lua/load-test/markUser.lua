-- markUser: a worker records that a user's task runs (or has stopped), only
-- while the user is still assigned to it: a user removed or reassigned in the
-- meantime is not brought back.
-- KEYS[1] user
-- KEYS[2] active = workerActiveUsers
-- ARGV[1] workerId
-- ARGV[2] userId
-- ARGV[3] status     'running' or 'stopped'
-- ARGV[4] now
-- Returns 1 when the user is (still) this worker's, else 0.
if ARGV[3] == 'stopped' then
  redis.call('SREM', KEYS[2], ARGV[2])
  return 0
end
if redis.call('HGET', KEYS[1], 'worker') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'status', 'running', 'updated_at', ARGV[4])
redis.call('SADD', KEYS[2], ARGV[2])
return 1
