-- touchManager: a manager's heartbeat, and how many other managers were alive before
-- it (0 on the first call: isFirstManager). Reads coord's manager index instead of
-- KEYS master:*:heartbeat; drops members whose heartbeat is gone.
-- KEYS[1] heartbeat = masterHeartbeat  this manager's heartbeat key
-- KEYS[2] managerIndex
-- ARGV[1] masterHead @head masterHeartbeat
-- ARGV[2] masterTail                   what follows the name in a heartbeat key
-- ARGV[3] name
-- ARGV[4] nowMs
-- ARGV[5] ttlMs
-- ARGV[6] deadAfterMs
-- Returns the number of other managers alive.
-- @include heartbeat
local now = tonumber(ARGV[4])
local deadAfter = tonumber(ARGV[6])
local others = 0
for _, member in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if member ~= ARGV[3] then
    local beat = heartbeatMs(redis.call('GET', ARGV[1] .. member .. ARGV[2]))
    if not beat then
      redis.call('ZREM', KEYS[2], member)
    elseif beat + deadAfter >= now then
      others = others + 1
    end
  end
end
redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
return others
