-- enqueue: a client waits for a worker. First come first served; refused when
-- the queue is full. Expired tickets at the head are dropped first.
-- KEYS[1] queue
-- ARGV[1] ticket                  '{deadlineMs}:{proxyId}:{ticketId}'
-- ARGV[2] nowMs
-- ARGV[3] maxQueue
-- Returns the ticket's position (1 = next), or 0 when the queue is full.
local now = tonumber(ARGV[2])
while true do
  local head = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if not head then break end
  local deadline = tonumber(string.match(head, '^(%d+):'))
  if deadline and deadline >= now then break end
  redis.call('ZREM', KEYS[1], head)
end
local size = redis.call('ZCARD', KEYS[1])
if size >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[1])
return redis.call('ZRANK', KEYS[1], ARGV[1]) + 1
