-- broadcast: queues one command (start_test, stop_test) on the command streams
-- of the given workers, only while the caller's epoch is the current one.
-- KEYS[1] epoch = testEpoch
-- ARGV[1] workerHead @head workerCommands   prefix + 'worker:'; the script appends '<id>:commands'
-- ARGV[2] expectEpoch
-- ARGV[3] type
-- ARGV[4] payload      JSON text
-- ARGV[5] commandId
-- ARGV[6] now
-- ARGV[7] cap
-- ARGV[8..] workers
-- Returns {workerId, entryId, ...} or {'err', 'EPOCH_CONFLICT', epoch}.
local epoch = redis.call('GET', KEYS[1]) or '0'
if epoch ~= ARGV[2] then return {'err', 'EPOCH_CONFLICT', epoch} end
local out = {}
for i = 8, #ARGV do
  local id = redis.call('XADD', ARGV[1] .. ARGV[i] .. ':commands', 'MAXLEN', '~', ARGV[7], '*',
    'type', ARGV[3], 'command_id', ARGV[5] .. '-' .. (i - 7), 'epoch', epoch, 'sent_at', ARGV[6], 'payload', ARGV[4])
  out[#out + 1] = ARGV[i]
  out[#out + 1] = id
end
return out
