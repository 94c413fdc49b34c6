-- version: routing by Playwright version. A client and a browser server must
-- share major.minor, so each worker sits in its type's freeIndex inside a band
-- of scores for its major.minor (band + lifetime; lifetime stays below BAND):
-- selection reads one band's top, and a worker whose version is not known yet
-- sits in band 0, which versioned clients never read.

local BAND = 1000000

-- '1.62' from '1.62', '1.62.1' or 'v1.62.1-beta'; nil when there is none
local function majorMinor(version)
  local major, minor = string.match(version or '', '^v?(%d+)%.(%d+)')
  if not major then return nil end
  return major .. '.' .. minor
end

local function versionBand(version)
  local major, minor = string.match(version or '', '^v?(%d+)%.(%d+)')
  if not major then return 0 end
  return (tonumber(major) * 1000 + tonumber(minor)) * BAND
end

-- the exclusive upper bound of a band, as ZRANGEBYSCORE takes it
local function bandEnd(band)
  return '(' .. (band + BAND)
end
