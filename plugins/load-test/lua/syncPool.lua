-- syncPool: vikhry's lazy pool sync: puts the ids the orchestrator declared
-- since the last sync into the available set and moves the watermark, once,
-- however many workers call it at the same time.
-- KEYS[1] resources
-- KEYS[2] available = resourceAvailable
-- KEYS[3] loaded = resourceLoaded
-- ARGV[1] name
-- Returns {declared, loaded before this call}.
-- @include sets
local declared = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local loaded = tonumber(redis.call('GET', KEYS[3]) or '0')
if loaded < declared then
  local ids = {}
  for id = loaded + 1, declared do ids[#ids + 1] = string.format('%d', id) end
  addAll(KEYS[2], ids)
  redis.call('SET', KEYS[3], string.format('%d', declared))
end
return {declared, loaded}
