-- removeUsers: unassigns the users with the highest ids (so ids stay dense)
-- and queues a remove_user command on each one's worker, in one step.
-- KEYS[1] users
-- KEYS[2] state = testState
-- KEYS[3] epoch = testEpoch
-- ARGV[1] userHead @head user
-- ARGV[2] workerHead @head workerUsers   prefix + 'worker:'; a worker's keys are head .. id .. tail
-- ARGV[3] usersTail                      workerUsers' pattern after {workerId} (':users'), from the contract
-- ARGV[4] commandsTail                   workerCommands' pattern after {workerId} (':commands'), from the contract
-- ARGV[5] expectEpoch
-- ARGV[6] now
-- ARGV[7] commandId
-- ARGV[8] cap
-- ARGV[9] count
-- ARGV[10] target
-- Returns a flat list {userId, workerId, ...} or {'err', CODE, detail}.
local state = redis.call('GET', KEYS[2]) or 'IDLE'
if state ~= 'PREPARING' and state ~= 'RUNNING' then return {'err', 'NOT_RUNNING', state} end
local epoch = redis.call('GET', KEYS[3]) or '0'
if epoch ~= ARGV[5] then return {'err', 'EPOCH_CONFLICT', epoch} end

local members = redis.call('SMEMBERS', KEYS[1])
local ids = {}
for i, m in ipairs(members) do ids[i] = tonumber(m) end
table.sort(ids, function(a, b) return a > b end)
local out = {}
for n = 1, math.min(tonumber(ARGV[9]), #ids) do
  local user = string.format('%d', ids[n])
  local worker = redis.call('HGET', ARGV[1] .. user, 'worker')
  redis.call('SREM', KEYS[1], user)
  redis.call('DEL', ARGV[1] .. user)
  if worker then
    redis.call('SREM', ARGV[2] .. worker .. ARGV[3], user)
    redis.call('XADD', ARGV[2] .. worker .. ARGV[4], 'MAXLEN', '~', ARGV[8], '*',
      'type', 'remove_user', 'command_id', ARGV[7] .. '-' .. n, 'epoch', epoch, 'sent_at', ARGV[6],
      'payload', '{"user_id":' .. user .. ',"target_users":' .. ARGV[10] .. '}')
    out[#out + 1] = user
    out[#out + 1] = worker
  end
end
return out
