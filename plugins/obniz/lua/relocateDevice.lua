-- relocateDevice: obniz-app-sdk's relocation of one device, checked in its order: no
-- alive slave: NO_ACCEPTABLE_WORKER; in no list: NOT_INSTALLED; its slave alive and
-- the move not forced: NO_NEED_TO_RELOCATE; no other alive slave:
-- NO_OTHER_ACCEPTABLE_WORKER; else it moves to the least-loaded other alive slave with
-- instanceName and updatedMillisecond rewritten (the install is kept byte for byte).
-- A device not started yet and moved to an SDK slave is no longer marked new.
-- KEYS[1] slaveIndex
-- KEYS[2] newInstalls
-- KEYS[3] coordSlaves
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] nowMs
-- ARGV[5] deadAfterMs
-- ARGV[6] obnizId
-- ARGV[7] force                        'true': move it even when its slave is alive
-- Returns {'ok', from, to} | {'err', code} | {'err', 'NO_NEED_TO_RELOCATE', its alive slave}
-- @include heartbeat
-- @include slaves
-- @include entry
-- @include installs
local workersHead, nowText, id = ARGV[1], ARGV[4], ARGV[6]
local alive = slaveAliveCheck(ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]))

local members = redis.call('ZRANGE', KEYS[1], 0, -1)
table.sort(members)
local living, counts = slaveLoads(members, alive, workersHead)
if #living == 0 then return {'err', 'NO_ACCEPTABLE_WORKER'} end

local owner = listHolding(members, workersHead, id)
if not owner then return {'err', 'NOT_INSTALLED'} end
if ARGV[7] ~= 'true' and alive(owner) then return {'err', 'NO_NEED_TO_RELOCATE', owner} end

local best = leastLoaded(living, counts, owner)
if not best then return {'err', 'NO_OTHER_ACCEPTABLE_WORKER'} end

local value = redis.call('HGET', workersHead .. owner, id)
redis.call('HSET', workersHead .. best, id, reassignedEntry(value, best, nowText))
redis.call('HDEL', workersHead .. owner, id)
keepMarkOnMove(KEYS[2], coordSlaveCheck(KEYS[3]), id, best)
return {'ok', owner, best}
