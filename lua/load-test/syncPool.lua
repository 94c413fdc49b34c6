-- syncPool: the seed's lazy pool sync: puts the ids the orchestrator declared
-- since the last sync into the available set and moves the watermark, once,
-- however many workers call it at the same time.
-- KEYS[1] resources
-- KEYS[2] available = resourceAvailable
-- KEYS[3] loaded = resourceLoaded
-- ARGV[1] name
-- Returns {declared, loaded before this call}.
local unpack = unpack or table.unpack -- Lua 5.1 (Redis) and 5.3 (embedded)
local declared = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local loaded = tonumber(redis.call('GET', KEYS[3]) or '0')
if loaded < declared then
  local batch = {}
  for id = loaded + 1, declared do
    batch[#batch + 1] = string.format('%d', id)
    if #batch == 1000 then
      redis.call('SADD', KEYS[2], unpack(batch))
      batch = {}
    end
  end
  if #batch > 0 then redis.call('SADD', KEYS[2], unpack(batch)) end
  redis.call('SET', KEYS[3], string.format('%d', declared))
end
return {declared, loaded}
