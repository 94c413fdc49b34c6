-- beginTest: starts a test in one step: IDLE → PREPARING with the epoch bumped
-- and the orchestrator's lease taken, so no other orchestrator (or a second
-- start on the same one) ever sees a PREPARING test without its lease and
-- takes it for abandoned. Creates the deployment's generation when it is
-- missing (the first test, or Redis restarted empty).
-- KEYS[1] state = testState
-- KEYS[2] epoch = testEpoch
-- KEYS[3] lease = orchestrator
-- KEYS[4] generation
-- ARGV[1] owner           the orchestrator's id
-- ARGV[2] leaseSeconds
-- ARGV[3] newGeneration   the generation to create when there is none
-- Returns {'ok', epoch, generation}, {'err', 'STATE_CONFLICT', state} or
-- {'err', 'LEASE_HELD', owner} (another orchestrator is still ending its test).
local state = redis.call('GET', KEYS[1]) or 'IDLE'
if state ~= 'IDLE' then return {'err', 'STATE_CONFLICT', state} end
local holder = redis.call('GET', KEYS[3])
if holder and holder ~= ARGV[1] then return {'err', 'LEASE_HELD', holder} end
redis.call('SET', KEYS[4], ARGV[3], 'NX')
local epoch = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], 'PREPARING')
redis.call('SET', KEYS[3], ARGV[1], 'EX', tonumber(ARGV[2]))
return {'ok', tostring(epoch), redis.call('GET', KEYS[4])}
