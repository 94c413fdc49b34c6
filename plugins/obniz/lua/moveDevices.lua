-- moveDevices: moves the caller planned (relocate.ts: the dead-slave relocation, a single
-- relocation, doAllRelocate), each device from one slave's list to another's with
-- instanceName and updatedMillisecond rewritten (the install is kept byte for byte).
-- Checked here per device in O(1): with fromMustBeDead '1', a device whose slave is
-- alive stays (ALIVE: a slave that came back in time keeps it); gone from that list:
-- NOT_INSTALLED; its new slave not alive now: NOT_ALIVE (the caller plans it again).
-- A device not started yet and moved to an SDK slave is no longer marked new.
-- KEYS[1] deviceIndex
-- KEYS[2] listStamps
-- KEYS[3] newInstalls
-- KEYS[4] coordSlaves
-- ARGV[1] workersHead @head workers
-- ARGV[2] slaveHead @head slaveHeartbeat
-- ARGV[3] slaveTail                    what follows the name in a heartbeat key
-- ARGV[4] nowMs
-- ARGV[5] deadAfterMs
-- ARGV[6] fromMustBeDead               '1': move only devices whose slave is dead
-- ARGV[7..] moves                      obnizId, from, to, obnizId, from, to, …
-- Returns a flat list: obnizId, 'ok', to | obnizId, 'err', 'ALIVE' | 'NOT_INSTALLED' | 'NOT_ALIVE'
-- @include heartbeat
-- @include lists
-- @include entry
-- @include results
-- @include installs
local workersHead, nowText = ARGV[1], ARGV[4]
local alive = slaveAliveCheck(ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]))
local isCoord = coordSlaveCheck(KEYS[4])
local mustBeDead = ARGV[6] == '1'

local out, touched = {}, {}
for i = 7, #ARGV, 3 do
  local id, from, to = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local value = redis.call('HGET', workersHead .. from, id)
  if mustBeDead and alive(from) then
    pushResult(out, id, nil, 'ALIVE')
  elseif not value then
    pushResult(out, id, nil, 'NOT_INSTALLED')
  elseif not alive(to) then
    pushResult(out, id, nil, 'NOT_ALIVE')
  else
    redis.call('HSET', workersHead .. to, id, reassignedEntry(value, to, nowText))
    redis.call('HDEL', workersHead .. from, id)
    redis.call('HSET', KEYS[1], id, to)
    keepMarkOnMove(KEYS[3], isCoord, id, to)
    touched[from], touched[to] = true, true
    pushResult(out, id, to)
  end
end
stampLists(KEYS[2], touched)
return out
