-- selectWorker: playwright-distributed's selector at a cost that does not grow with the fleet.
-- Eligible: available, live heartbeat, active < maxConcurrent, lifetime < maxLifetime,
-- and speaking the client's Playwright major.minor (its band of freeIndex).
-- margin = max(1, floor(maxLifetime / workers)); prefer the highest lifetime below
-- (maxLifetime - margin), ties to fewer active; else any eligible. Reads only the top
-- of the band, dropping members it finds ineligible (they come back on their heartbeat);
-- a member's score (band + lifetime) orders the page, so only the first candidate and
-- those tied with it on lifetime are read.
-- Waiting clients are served first come first served: a call without a ticket gets
-- 'queued' while anyone of its version waits, and a ticket gets 'wait' until it is at the head.
-- KEYS[1] active = activeConnections
-- KEYS[2] lifetime = lifetimeConnections
-- KEYS[3] workerIndex
-- KEYS[4] freeIndex
-- KEYS[5] queue                   the queue of the client's type and version
-- KEYS[6] leases                  the calling proxy's leases
-- KEYS[7] versions                the type's versions served
-- ARGV[1] workerHead @head worker
-- ARGV[2] nowMs
-- ARGV[3] staleMs
-- ARGV[4] maxConcurrent
-- ARGV[5] maxLifetime
-- ARGV[6] connectionId            lease field for the new session
-- ARGV[7] ticket                  the caller's queue ticket, or '' when it has none
-- ARGV[8] exclude                 refs not to pick, comma-separated (workers a dial just failed on)
-- ARGV[9] version                 the client's Playwright major.minor, or '' for any
-- ARGV[10] protocol               'cdp' for a DevTools-protocol client, 'bidi' for a WebDriver BiDi one: only workers
--                                 with a cdpEndpoint (bidiEndpoint), which is returned; else only those with a wsEndpoint
-- Returns {'ok', ref, endpoint, lifetime, active} | {'none'} | {'queued'} | {'wait'}
--   | {'absent'} when no worker of the type is registered at all (waiting would be pointless)
--   | {'noversion', 'v1,v2'} when no live worker speaks the client's version: the versions served
-- @include version
-- @include free
local now = tonumber(ARGV[2])
local stale = tonumber(ARGV[3])
local maxConcurrent = tonumber(ARGV[4])
local maxLifetime = tonumber(ARGV[5])
local ticket = ARGV[7]
local want = ARGV[9]
local protocol = ARGV[10]

local workers = redis.call('ZCARD', KEYS[3])
if workers == 0 then return {'absent'} end

-- The versions live workers speak: seen within the stale threshold (a coord worker's
-- heartbeat, a release), or with a worker free in its band right now (an idle foreign
-- worker, whose heartbeat only its own hash sees). Others are dropped.
local function servedVersions()
  local served = {}
  local seen = redis.call('HGETALL', KEYS[7])
  for i = 1, #seen, 2 do
    local band = versionBand(seen[i])
    if now - tonumber(seen[i + 1]) <= stale or redis.call('ZCOUNT', KEYS[4], band, bandEnd(band)) > 0 then
      served[#served + 1] = seen[i]
    else
      redis.call('HDEL', KEYS[7], seen[i])
    end
  end
  return served
end
local bands = {}
local recent = want ~= '' and tonumber(redis.call('HGET', KEYS[7], want))
if recent and isLive(recent, now, stale) then
  bands[1] = versionBand(want) -- the common case: one read
elseif want == '' then
  local served = servedVersions()
  for _, mm in ipairs(served) do bands[#bands + 1] = versionBand(mm) end
  bands[#bands + 1] = 0
else
  local served = servedVersions()
  local known = false
  for _, mm in ipairs(served) do known = known or mm == want end
  if not known then
    table.sort(served)
    return {'noversion', table.concat(served, ',')}
  end
  bands[1] = versionBand(want)
end

-- tickets start with their deadline: drop the expired ones at the head
local head
while true do
  head = redis.call('ZRANGE', KEYS[5], 0, 0)[1]
  if not head then break end
  local deadline = tonumber(string.match(head, '^(%d+):'))
  if deadline and deadline >= now then break end
  redis.call('ZREM', KEYS[5], head)
end
if ticket == '' and head then return {'queued'} end
if ticket ~= '' and head ~= ticket then return {'wait'} end

local isFree = freeWorkerRule(now, stale, maxConcurrent, maxLifetime)
local excluded = {}
for ref in string.gmatch(ARGV[8], '[^,]+') do excluded[ref] = true end

local function eligible(ref)
  local state = redis.call('HMGET', ARGV[1] .. ref, 'status', 'lastHeartbeat', 'wsEndpoint', 'endpoint', 'version', 'cdpEndpoint', 'bidiEndpoint')
  local beat = heartbeatMs(state[2])
  if not beat then return nil end
  local active = tonumber(redis.call('HGET', KEYS[1], ref)) or 0
  local lifetime = tonumber(redis.call('HGET', KEYS[2], ref)) or 0
  if not isFree(state[1], beat, active, lifetime) then return nil end
  -- the endpoint the client's protocol is served on; none (false) when the worker does not serve it
  local endpoint = state[3] or state[4]
  if protocol == 'cdp' then endpoint = state[6] elseif protocol == 'bidi' then endpoint = state[7] end
  return {endpoint = endpoint, active = active, lifetime = lifetime, band = versionBand(state[5])}
end

-- the best eligible worker among freeIndex members scored within [low, high], from the top
local function best(low, high)
  local pick, pickRef, pickScore
  local offset = 0
  -- a first page of 4 (a pick usually needs one or two), then pages of 16: at most 132 members
  local size = 4
  for _ = 1, 9 do
    local page = redis.call('ZREVRANGEBYSCORE', KEYS[4], high, low, 'WITHSCORES', 'LIMIT', offset, size)
    size = 16
    if #page == 0 then break end
    local removed = 0
    for i = 1, #page, 2 do
      local ref, score = page[i], tonumber(page[i + 1])
      -- below the pick's score: a lower lifetime, as is everything after it on the page
      if pick and score < pickScore then return pickRef, pick end
      if not excluded[ref] then
        local w = eligible(ref)
        if not w then
          redis.call('ZREM', KEYS[4], ref) -- back at its next heartbeat or release
          removed = removed + 1
        elseif not w.endpoint then
          -- serves other clients only (Playwright's, or BiDi's): passed over, kept
        elseif not pick or (w.lifetime == pick.lifetime and w.active < pick.active) then
          pick, pickRef, pickScore = w, ref, score
        elseif w.lifetime < pick.lifetime then
          return pickRef, pick
        end
      end
    end
    if pick then break end
    offset = offset + #page / 2 - removed
  end
  return pickRef, pick
end

local margin = math.max(1, math.floor(maxLifetime / math.max(workers, 1)))
local ref, w
for _, band in ipairs(bands) do
  ref, w = best(band, '(' .. (band + maxLifetime - margin))
  if not ref then ref, w = best(band, bandEnd(band)) end
  if ref then break end
end
if not ref then return {'none'} end

local active = redis.call('HINCRBY', KEYS[1], ref, 1)
local lifetime = redis.call('HINCRBY', KEYS[2], ref, 1)
if active >= maxConcurrent or lifetime >= maxLifetime then
  redis.call('ZREM', KEYS[4], ref)
else
  redis.call('ZADD', KEYS[4], w.band + lifetime, ref)
end
redis.call('HSET', KEYS[6], ARGV[6], ref)
if ticket ~= '' then redis.call('ZREM', KEYS[5], ticket) end
return {'ok', ref, w.endpoint, lifetime, active}
