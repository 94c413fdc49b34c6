-- claimDevices: a slave asks to start workers. It gets a device's claim when the
-- device is in its own list and no other alive slave holds the claim (a dead holder's
-- claim is taken over). Holding the claim is what allows a worker to run, so a device
-- moved between two alive slaves starts on the new one only after the old one stopped
-- it and gave the claim back. A device marked new is unmarked: the caller runs onInstall.
-- A device coord has never seen (not in the device index, no claim: an obniz-app-sdk
-- manager listed it) counts as new too. The device index is set to this slave.
-- KEYS[1] claims
-- KEYS[2] workers                      the claiming slave's distribution list
-- KEYS[3] newInstalls
-- KEYS[4] deviceIndex
-- ARGV[1] slaveHead @head slaveHeartbeat
-- ARGV[2] slaveTail                    what follows the name in a heartbeat key
-- ARGV[3] nowMs
-- ARGV[4] deadAfterMs
-- ARGV[5] name                         the claiming slave
-- ARGV[6..] obnizIds
-- Returns a flat list of four per device: obnizId, status ('ok' | 'wait' | 'gone'),
-- fresh ('1' when new: call onInstall, else '0'), the previous holder ('' when none).
-- @include heartbeat
local me = ARGV[5]
local alive = slaveAliveCheck(ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]))

local out = {}
for i = 6, #ARGV do
  local id = ARGV[i]
  out[#out + 1] = id
  local holder = redis.call('HGET', KEYS[1], id)
  if not holder then holder = '' end
  if redis.call('HEXISTS', KEYS[2], id) == 0 then
    out[#out + 1] = 'gone'
    out[#out + 1] = '0'
  elseif holder ~= '' and holder ~= me and alive(holder) then
    out[#out + 1] = 'wait'
    out[#out + 1] = '0'
  else
    redis.call('HSET', KEYS[1], id, me)
    out[#out + 1] = 'ok'
    local fresh = redis.call('SREM', KEYS[3], id)
    if redis.call('HSET', KEYS[4], id, me) == 1 and holder == '' then fresh = 1 end
    out[#out + 1] = tostring(fresh)
  end
  out[#out + 1] = holder
end
return out
