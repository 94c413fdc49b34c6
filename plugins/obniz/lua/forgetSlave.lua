-- forgetSlave: a dead slave (heartbeat missing, or older than deadAfter) whose list is
-- empty (its devices moved by moveDevices) leaves: its list, heartbeat, index entry,
-- coord-slave mark and change stamp are deleted, as obniz-app-sdk deletes a dead
-- slave's keys. Checked in the same step, so a slave that came back stays.
-- KEYS[1] slaveIndex
-- KEYS[2] workers                      the slave's distribution list
-- KEYS[3] heartbeat = slaveHeartbeat   the slave's heartbeat key
-- KEYS[4] coordSlaves
-- KEYS[5] listStamps
-- ARGV[1] slaveHead @head slaveHeartbeat
-- ARGV[2] slaveTail                    what follows the name in a heartbeat key
-- ARGV[3] nowMs
-- ARGV[4] deadAfterMs
-- ARGV[5] name
-- Returns 'alive' | 'busy' (devices are still listed on it) | 'gone'
-- @include heartbeat
local alive = slaveAliveCheck(ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]))
if alive(ARGV[5]) then return 'alive' end
if redis.call('HLEN', KEYS[2]) > 0 then return 'busy' end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[1], ARGV[5])
redis.call('SREM', KEYS[4], ARGV[5])
redis.call('HDEL', KEYS[5], ARGV[5])
return 'gone'
