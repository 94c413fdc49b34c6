-- heartbeat: reading obniz-app-sdk's heartbeats. A beat is Date.now() in ms, or
-- seconds (an SDK manager's first beat).

-- the beat in ms, or nil when there is none
local function heartbeatMs(value)
  local beat = tonumber(value)
  if beat and beat < 100000000000 then beat = beat * 1000 end
  return beat
end

-- alive(name): the slave's heartbeat exists and is not older than deadAfter at now
-- (one GET per slave and script call: the answer is kept for the rest of the call)
local function slaveAliveCheck(slaveHead, slaveTail, now, deadAfter)
  local known = {}
  return function(name)
    if known[name] == nil then
      local beat = heartbeatMs(redis.call('GET', slaveHead .. name .. slaveTail))
      known[name] = beat ~= nil and beat + deadAfter >= now
    end
    return known[name]
  end
end
