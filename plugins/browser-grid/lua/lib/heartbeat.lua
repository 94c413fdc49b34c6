-- heartbeat: a worker's lastHeartbeat, and whether it is recent enough. The
-- layout playwright-distributed documents keeps seconds, playwright-distributed
-- itself writes milliseconds: a value below 10^11 (1973 in ms, year 5138 in s)
-- is seconds.

-- the beat in ms, or nil when there is none
local function heartbeatMs(value)
  local beat = tonumber(value)
  if beat and beat < 100000000000 then beat = beat * 1000 end
  return beat
end

-- a beat (ms) no older than the stale threshold (ms) at now
local function isLive(beat, now, stale)
  return beat ~= nil and now - beat <= stale
end
