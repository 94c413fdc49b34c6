-- entry: a distribution list value as obniz-app-sdk writes it,
-- {"install":…,"instanceName":…,"updatedMillisecond":…}, the install text kept
-- byte for byte.

local quotedNames = {}

-- the entry of an install (JSON text) on slave `name`, written at nowText (ms, as text)
local function listEntry(install, name, nowText)
  local quoted = quotedNames[name]
  if not quoted then
    quoted = cjson.encode(name)
    quotedNames[name] = quoted
  end
  return '{"install":' .. install .. ',"instanceName":' .. quoted .. ',"updatedMillisecond":' .. nowText .. '}'
end

-- the entry moved to slave `name` at nowText; a value that has no install is kept as it is
local function reassignedEntry(value, name, nowText)
  local install = string.match(value, '^{"install":(.*),"instanceName":"[^"\\]*","updatedMillisecond":%d+}$')
  if not install then
    local ok, decoded = pcall(cjson.decode, value)
    if not ok or type(decoded) ~= 'table' or decoded.install == nil then return value end
    install = cjson.encode(decoded.install)
  end
  return listEntry(install, name, nowText)
end
