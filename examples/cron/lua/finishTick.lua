-- finishTick: records how a run ended and gives its lease back. A run whose
-- tick the sweep already recorded as lost (its lease expired first) is not
-- recorded again.
-- KEYS[1] job
-- KEYS[2] lease
-- KEYS[3] running
-- KEYS[4] runs
-- ARGV[1] jobId
-- ARGV[2] tick
-- ARGV[3] runner
-- ARGV[4] status        ok or failed
-- ARGV[5] exitCode
-- ARGV[6] startedAt     ms
-- ARGV[7] finishedAt    ms
-- ARGV[8] historyLength entries kept in runs
-- Returns 1, or 0 when the tick had been recorded as lost.
if redis.call('ZREM', KEYS[3], ARGV[1] .. ':' .. ARGV[2]) == 0 then return 0 end
redis.call('DEL', KEYS[2])
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'runs', 1)
  if ARGV[4] == 'failed' then redis.call('HINCRBY', KEYS[1], 'failed', 1) end
  redis.call('HSET', KEYS[1], 'lastRunner', ARGV[3], 'lastStatus', ARGV[4], 'lastFinishedAt', ARGV[7])
end
redis.call('XADD', KEYS[4], 'MAXLEN', ARGV[8], '*', 'jobId', ARGV[1], 'tick', ARGV[2], 'runner', ARGV[3], 'status', ARGV[4],
  'exitCode', ARGV[5], 'startedAt', ARGV[6], 'finishedAt', ARGV[7])
return 1
