-- appendLog: one entry of a session's log, and its count in the log metrics.
-- KEYS[1] log = sessionLog
-- KEYS[2] counts = logCounts          metrics:sessions:log:{level} of the entry's level
-- ARGV[1] component
-- ARGV[2] level
-- ARGV[3] code
-- ARGV[4] meta
-- ARGV[5] maxLen                      the stream is capped at this many entries
-- Returns the entry id.
local id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[5], '*', 'component', ARGV[1], 'level', ARGV[2], 'code', ARGV[3], 'meta', ARGV[4])
redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
return id
