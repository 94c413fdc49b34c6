-- broadcast: queues one command (start_test, stop_test) on the command streams
-- of the given workers, only while the caller's epoch is the current one.
-- KEYS[1] epoch = testEpoch
-- KEYS[2..] commands = workerCommands   worker:<id>:commands of each worker of ARGV[7..], in that order
-- ARGV[1] expectEpoch
-- ARGV[2] type
-- ARGV[3] payload      JSON text
-- ARGV[4] commandId
-- ARGV[5] now
-- ARGV[6] cap
-- ARGV[7..] workers
-- Returns {workerId, entryId, ...} or {'err', 'EPOCH_CONFLICT', epoch}.
local epoch = redis.call('GET', KEYS[1]) or '0'
if epoch ~= ARGV[1] then return {'err', 'EPOCH_CONFLICT', epoch} end
local out = {}
for i = 7, #ARGV do
  local id = redis.call('XADD', KEYS[i - 5], 'MAXLEN', '~', ARGV[6], '*',
    'type', ARGV[2], 'command_id', ARGV[4] .. '-' .. (i - 6), 'epoch', epoch, 'sent_at', ARGV[5], 'payload', ARGV[3])
  out[#out + 1] = ARGV[i]
  out[#out + 1] = id
end
return out
