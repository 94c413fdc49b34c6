-- endTest: a test's last step: its state (STOPPING, or PREPARING when the
-- start failed) goes to IDLE and its orchestrator gives the lease back, in one
-- step, only while the test is still the caller's (its epoch). A lease another
-- orchestrator holds is left alone.
-- KEYS[1] state = testState
-- KEYS[2] epoch = testEpoch
-- KEYS[3] lease = orchestrator
-- ARGV[1] from          the state the caller expects now
-- ARGV[2] expectEpoch
-- ARGV[3] owner         the orchestrator's id
-- Returns {'ok', epoch}, {'err', 'STATE_CONFLICT', state} or {'err', 'EPOCH_CONFLICT', epoch}.
local epoch = redis.call('GET', KEYS[2]) or '0'
if epoch ~= ARGV[2] then return {'err', 'EPOCH_CONFLICT', epoch} end
local state = redis.call('GET', KEYS[1]) or 'IDLE'
if state ~= ARGV[1] then return {'err', 'STATE_CONFLICT', state} end
redis.call('SET', KEYS[1], 'IDLE')
if redis.call('GET', KEYS[3]) == ARGV[3] then redis.call('DEL', KEYS[3]) end
return {'ok', epoch}
