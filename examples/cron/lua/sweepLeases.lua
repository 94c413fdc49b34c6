-- sweepLeases: records as lost the claimed ticks whose lease expired before
-- their run finished (the runner died or hung). They are not run again: a
-- tick runs at most once. Reads only the expired end of running.
-- KEYS[1] running
-- KEYS[2] runs
-- ARGV[1] jobHead @head job
-- ARGV[2] leaseHead @head lease
-- ARGV[3] nowS
-- ARGV[4] limit          most ticks looked at in one call
-- ARGV[5] historyLength  entries kept in runs
-- Returns the ticks recorded as lost ('jobId:tick').
local lost = {}
for _, item in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[3], 'LIMIT', 0, tonumber(ARGV[4]))) do
  if redis.call('EXISTS', ARGV[2] .. item) == 0 then
    redis.call('ZREM', KEYS[1], item)
    local sep = string.find(item, ':', 1, true)
    local jobId, tick = string.sub(item, 1, sep - 1), string.sub(item, sep + 1)
    if redis.call('EXISTS', ARGV[1] .. jobId) == 1 then
      redis.call('HINCRBY', ARGV[1] .. jobId, 'lost', 1)
      redis.call('HSET', ARGV[1] .. jobId, 'lastStatus', 'lost')
    end
    redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[5], '*', 'jobId', jobId, 'tick', tick, 'status', 'lost')
    lost[#lost + 1] = item
  end
end
return lost
