-- transitionState: compare-and-set of the test's lifecycle state. Entering
-- PREPARING bumps the epoch, so every command of the new test outranks the
-- old test's. A missing state counts as IDLE.
-- KEYS[1] state = testState
-- KEYS[2] epoch = testEpoch
-- ARGV[1] from          the state the caller expects now
-- ARGV[2] to            the new state
-- ARGV[3] bump          '1': increment the epoch
-- ARGV[4] expectEpoch   '' or the epoch the caller runs (another orchestrator's newer test fails the call)
-- Returns {'ok', epoch}, {'err', 'STATE_CONFLICT', current} or {'err', 'EPOCH_CONFLICT', epoch}.
local current = redis.call('GET', KEYS[1]) or 'IDLE'
local epoch = tonumber(redis.call('GET', KEYS[2]) or '0')
if ARGV[4] ~= '' and tonumber(ARGV[4]) ~= epoch then
  return {'err', 'EPOCH_CONFLICT', tostring(epoch)}
end
if current ~= ARGV[1] then
  return {'err', 'STATE_CONFLICT', current}
end
if ARGV[3] == '1' then epoch = redis.call('INCR', KEYS[2]) end
redis.call('SET', KEYS[1], ARGV[2])
return {'ok', tostring(epoch)}
