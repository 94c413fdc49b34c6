-- measureSession: gc weighs a terminated session once, so that the history can
-- be bounded in bytes (gc.maxBytes): the Redis memory of every key the session
-- has (MEMORY USAGE), kept in its status hash as `bytes`. A backend without
-- MEMORY USAGE (the embedded one) gets an estimate as Redis would count it:
-- each key's name and values, 64 bytes a key for what holds them, and 4 KB for
-- a stream (Redis allocates a stream's first node whole: stream-node-max-bytes).
-- KEYS[1] status = sessionStatus
-- KEYS[2] nodeHeartbeat = sessionNodeHeartbeat
-- KEYS[3] managerHeartbeat = sessionManagerHeartbeat
-- KEYS[4] slot = sessionSlot
-- KEYS[5] orchestrator = sessionOrchestrator
-- KEYS[6] log = sessionLog
-- KEYS[7] capabilities = sessionCapabilities
-- KEYS[8] metadata = sessionMetadata
-- KEYS[9] upstream = sessionUpstream
-- KEYS[10] downstream = sessionDownstream
-- KEYS[11] ready = sessionReady
-- KEYS[12] storage = sessionStorage
-- Returns the session's bytes (0 when it has no status: it was purged).
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end

local function lengths(items)
  local n = 0
  for _, item in ipairs(items) do
    if type(item) == 'table' then n = n + lengths(item) else n = n + #tostring(item) end
  end
  return n
end

local function estimate(key)
  local kind = redis.call('TYPE', key)['ok']
  local values = 0
  if kind == 'string' then values = redis.call('STRLEN', key)
  elseif kind == 'hash' then values = lengths(redis.call('HGETALL', key))
  elseif kind == 'list' then values = lengths(redis.call('LRANGE', key, 0, -1))
  elseif kind == 'stream' then values = 4096 + lengths(redis.call('XRANGE', key, '-', '+'))
  elseif kind == 'none' then return 0 end
  return 64 + #key + values
end

local bytes = 0
for i = 1, #KEYS do
  local usage = redis.pcall('MEMORY', 'USAGE', KEYS[i])
  if type(usage) == 'number' then bytes = bytes + usage
  elseif type(usage) == 'table' and usage.err then bytes = bytes + estimate(KEYS[i]) end
end
redis.call('HSET', KEYS[1], 'bytes', bytes)
return bytes
