-- heartbeat: reading obniz-app-sdk's heartbeats. A beat is Date.now() in ms, or
-- seconds (an SDK manager's first beat).

-- the beat in ms, or nil when there is none
local function heartbeatMs(value)
  local beat = tonumber(value)
  if beat and beat < 100000000000 then beat = beat * 1000 end
  return beat
end

-- alive(name): the slave's heartbeat exists and is not older than deadAfter at now
local function slaveAliveCheck(slaveHead, slaveTail, now, deadAfter)
  return function(name)
    local beat = heartbeatMs(redis.call('GET', slaveHead .. name .. slaveTail))
    if not beat then return false end
    return beat + deadAfter >= now
  end
end
