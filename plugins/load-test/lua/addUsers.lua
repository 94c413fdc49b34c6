-- addUsers: assigns users round-robin over the alive-worker snapshot and
-- queues an add_user command on each chosen worker's command stream, in one
-- step, so an assignment never exists without its command (or the reverse).
-- New users take the next ids (ids stay dense: removeUsers removes the highest);
-- given ids (a dead worker's users) are reassigned as they are.
-- KEYS[1] users
-- KEYS[2] cursor
-- KEYS[3] state = testState
-- KEYS[4] epoch = testEpoch
-- ARGV[1] userHead @head user            prefix + 'user:'
-- ARGV[2] workerHead @head workerUsers   prefix + 'worker:'; a worker's keys are head .. id .. tail
-- ARGV[3] usersTail                      workerUsers' pattern after {workerId} (':users'), from the contract
-- ARGV[4] commandsTail                   workerCommands' pattern after {workerId} (':commands'), from the contract
-- ARGV[5] expectEpoch
-- ARGV[6] now                            Unix seconds
-- ARGV[7] commandId                      base of the command ids ('<base>-<n>')
-- ARGV[8] cap                            MAXLEN ~ of the command streams
-- ARGV[9] count                          new users to add (ignored when ids are given)
-- ARGV[10] ids                           JSON array of user ids to reassign, or '[]'
-- ARGV[11] target                        the target number of users (sent in the payload)
-- ARGV[12..] workers                     alive worker ids, in snapshot order
-- Returns a flat list {userId, workerId, ...} or {'err', CODE, detail}.
-- @include sets
local state = redis.call('GET', KEYS[3]) or 'IDLE'
if state ~= 'PREPARING' and state ~= 'RUNNING' then return {'err', 'NOT_RUNNING', state} end
local epoch = redis.call('GET', KEYS[4]) or '0'
if epoch ~= ARGV[5] then return {'err', 'EPOCH_CONFLICT', epoch} end
local workers = {}
for i = 12, #ARGV do workers[#workers + 1] = ARGV[i] end
if #workers == 0 then return {'err', 'NO_WORKERS', ''} end

local ids = cjson.decode(ARGV[10])
if #ids == 0 then
  local next = redis.call('SCARD', KEYS[1]) + 1
  for _ = 1, tonumber(ARGV[9]) do
    while redis.call('SISMEMBER', KEYS[1], tostring(next)) == 1 do next = next + 1 end
    ids[#ids + 1] = next
    next = next + 1
  end
end

local cursor = tonumber(redis.call('GET', KEYS[2]) or '0')
local out, added, byWorker = {}, {}, {}
for n, id in ipairs(ids) do
  local user = type(id) == 'string' and id or string.format('%d', id)
  local worker = workers[(cursor % #workers) + 1]
  cursor = cursor + 1
  added[#added + 1] = user
  byWorker[worker] = byWorker[worker] or {}
  table.insert(byWorker[worker], user)
  redis.call('HSET', ARGV[1] .. user, 'worker', worker, 'status', 'assigned', 'updated_at', ARGV[6])
  redis.call('XADD', ARGV[2] .. worker .. ARGV[4], 'MAXLEN', '~', ARGV[8], '*',
    'type', 'add_user', 'command_id', ARGV[7] .. '-' .. n, 'epoch', epoch, 'sent_at', ARGV[6],
    'payload', '{"user_id":' .. user .. ',"target_users":' .. ARGV[11] .. '}')
  out[#out + 1] = user
  out[#out + 1] = worker
end
addAll(KEYS[1], added)
for worker, users in pairs(byWorker) do addAll(ARGV[2] .. worker .. ARGV[3], users) end
redis.call('SET', KEYS[2], string.format('%d', cursor))
return out
