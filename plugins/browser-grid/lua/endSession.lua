-- endSession: a session created with POST /v1/sessions ends, once: the first
-- of its ends (attached and closed, deleted, expired unattached, failed)
-- decides its status; the others find it ended and change nothing.
-- KEYS[1] session
-- ARGV[1] from                    the statuses it may end from, comma-separated
-- ARGV[2] to                      completed, failed or expired
-- ARGV[3] nowMs
-- ARGV[4] reason
-- ARGV[5] retentionS              how long the ended record stays readable
-- Returns {'ended', the status it ended from}, {'kept', its status} when it had ended already, or {'absent'}.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'absent'} end
if not string.find(',' .. ARGV[1] .. ',', ',' .. status .. ',', 1, true) then return {'kept', status} end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'ended_ms', ARGV[3], 'end_reason', ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return {'ended', status}
