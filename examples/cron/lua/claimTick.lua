-- claimTick: hands the oldest queued tick to one runner under a lease. Only
-- one caller can pop an item, so each tick runs at most once. A tick whose
-- job has a later tick queued already is skipped (counted, not run): after an
-- outage a job runs once, not once per missed tick.
-- KEYS[1] due
-- KEYS[2] running
-- KEYS[3] runs
-- ARGV[1] jobHead @head job
-- ARGV[2] leaseHead @head lease
-- ARGV[3] runner
-- ARGV[4] nowMs
-- ARGV[5] nowS
-- ARGV[6] leaseGrace   seconds the lease outlives the job's timeout
-- ARGV[7] historyLength entries kept in runs
-- Returns {jobId, tick, command, timeout}, or {} when nothing is due.
while true do
  local item = redis.call('RPOP', KEYS[1])
  if not item then return {} end
  local sep = string.find(item, ':', 1, true)
  local jobId, tick = string.sub(item, 1, sep - 1), string.sub(item, sep + 1)
  local job = ARGV[1] .. jobId
  local def = redis.call('HMGET', job, 'lastTick', 'command', 'timeout')
  if def[2] then -- a job that was never defined, or deleted, is dropped
    if tonumber(def[1]) > tonumber(tick) then
      redis.call('HINCRBY', job, 'skipped', 1)
      redis.call('XADD', KEYS[3], 'MAXLEN', ARGV[7], '*', 'jobId', jobId, 'tick', tick, 'status', 'skipped')
    else
      local ttl = math.ceil(tonumber(def[3]) + tonumber(ARGV[6]))
      redis.call('SET', ARGV[2] .. item, ARGV[3], 'EX', ttl)
      redis.call('ZADD', KEYS[2], tonumber(ARGV[5]) + ttl, item)
      return { jobId, tick, def[2], def[3] }
    end
  end
end
