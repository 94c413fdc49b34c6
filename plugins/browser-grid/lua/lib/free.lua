-- free: the "free worker" rule. A worker can take a session when it is available,
-- its heartbeat is live and it is below both session limits. Only free workers
-- sit in freeIndex (touchWorker, releaseConnection file them), and selectWorker
-- checks the rule again before it picks one.
-- @include heartbeat

-- isFree(status, beat, active, lifetime) under the given time and limits
local function freeWorkerRule(now, stale, maxConcurrent, maxLifetime)
  return function(status, beat, active, lifetime)
    return status == 'available' and isLive(beat, now, stale) and active < maxConcurrent and lifetime < maxLifetime
  end
end
