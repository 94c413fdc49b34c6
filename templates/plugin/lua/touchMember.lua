-- touchMember: writes a member's record with a fresh TTL and scores it in the
-- index, in one step so the two never disagree.
-- KEYS[1] member
-- KEYS[2] members
-- ARGV[1] memberId
-- ARGV[2] nowMs
-- ARGV[3] ttl        seconds
-- Returns 1 when the member is new, 0 when it was known.
local new = redis.call('EXISTS', KEYS[1]) == 0
if new then redis.call('HSET', KEYS[1], 'startedAt', ARGV[2]) end
redis.call('HSET', KEYS[1], 'beatAt', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
if new then return 1 end
return 0
