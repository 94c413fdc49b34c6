-- relocateSlave: a slave found dead (heartbeat missing, or older than deadAfter) gives
-- all its devices to the alive slaves, each to the least loaded at that moment; then
-- its list, heartbeat, index entry and coord-slave mark are deleted. The heartbeat is
-- checked here, in the same atomic step, so a slave that came back in time keeps its
-- devices. A device not started yet and moved to an SDK slave is no longer marked new.
-- KEYS[1] slaveIndex
-- KEYS[2] workers                      the slave's distribution list
-- KEYS[3] heartbeat = slaveHeartbeat   the slave's heartbeat key
-- KEYS[4] newInstalls
-- KEYS[5] coordSlaves
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] nowMs
-- ARGV[5] deadAfterMs
-- ARGV[6] name
-- Returns {'alive'} | {'err', 'NO_ACCEPTABLE_WORKER'} | {'ok', obnizId, to, obnizId, to, …}
-- @include heartbeat
-- @include slaves
-- @include entry
-- @include installs
local workersHead, nowText, dead = ARGV[1], ARGV[4], ARGV[6]
local alive = slaveAliveCheck(ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]))

if alive(dead) then return {'alive'} end

local ids = redis.call('HKEYS', KEYS[2])
local out = {'ok'}
if #ids > 0 then
  local members = redis.call('ZRANGE', KEYS[1], 0, -1)
  table.sort(members)
  local living, counts = slaveLoads(members, alive, workersHead)
  if #living == 0 then return {'err', 'NO_ACCEPTABLE_WORKER'} end
  local isCoord = coordSlaveCheck(KEYS[5])
  for _, id in ipairs(ids) do
    local best = leastLoaded(living, counts, dead)
    redis.call('HSET', workersHead .. best, id, reassignedEntry(redis.call('HGET', KEYS[2], id), best, nowText))
    counts[best] = counts[best] + 1
    keepMarkOnMove(KEYS[4], isCoord, id, best)
    out[#out + 1] = id
    out[#out + 1] = best
  end
end
redis.call('DEL', KEYS[2])
redis.call('DEL', KEYS[3])
redis.call('ZREM', KEYS[1], dead)
redis.call('SREM', KEYS[5], dead)
return out
