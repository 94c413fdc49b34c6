-- claimDevices: a slave asks to start workers. It gets a device's claim when the
-- device is in its own list and no other alive slave holds the claim (a dead holder's
-- claim is taken over). Holding the claim is what allows a worker to run, so a device
-- moved between two alive slaves starts on the new one only after the old one stopped
-- it and gave the claim back. A device marked new is unmarked: the caller runs onInstall.
-- A device coord has never seen (not in the device index, no claim: an obniz-app-sdk
-- manager listed it) counts as new too. The device index is set to this slave.
-- KEYS[1] workers                      the claiming slave's distribution list
-- ARGV[1] slaveHead @head slaveHeartbeat
-- ARGV[2] slaveTail                    what follows the name in a heartbeat key
-- ARGV[3] nowMs
-- ARGV[4] deadAfterMs
-- ARGV[5] name                         the claiming slave
-- ARGV[6] claimsHead @head claims
-- ARGV[7] newHead @head newInstalls
-- ARGV[8] indexHead @head deviceIndex
-- ARGV[9..] devices                    obnizId, shard, obnizId, shard, …
-- Returns a flat list of four per device: obnizId, status ('ok' | 'wait' | 'gone'),
-- fresh ('1' when new: call onInstall, else '0'), the previous holder ('' when none).
-- @include shards
-- @include heartbeat
local me = ARGV[5]
local claimsKey, newKey, indexKey = shardKeys(ARGV[6]), shardKeys(ARGV[7]), shardKeys(ARGV[8])
local alive = slaveAliveCheck(ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]))

local out = {}
for i = 9, #ARGV, 2 do
  local id, shard = ARGV[i], ARGV[i + 1]
  out[#out + 1] = id
  local claims = claimsKey(shard)
  local holder = redis.call('HGET', claims, id)
  if not holder then holder = '' end
  if redis.call('HEXISTS', KEYS[1], id) == 0 then
    out[#out + 1] = 'gone'
    out[#out + 1] = '0'
  elseif holder ~= '' and holder ~= me and alive(holder) then
    out[#out + 1] = 'wait'
    out[#out + 1] = '0'
  else
    redis.call('HSET', claims, id, me)
    out[#out + 1] = 'ok'
    local fresh = redis.call('SREM', newKey(shard), id)
    if redis.call('HSET', indexKey(shard), id, me) == 1 and holder == '' then fresh = 1 end
    out[#out + 1] = tostring(fresh)
  end
  out[#out + 1] = holder
end
return out
