// Lua run once in each embedded dataset's Lua state, before any script: what Redis
// gives scripts and fengari lacks (cjson, redis.error_reply / status_reply, redis.log,
// unpack), then the same lock on globals Redis 7 applies. redis.call, redis.pcall and
// redis.sha1hex are JavaScript functions set up by lua-vm.ts before this runs.
// Kept as a string (not a .lua file) so it ships inside the compiled package.
export const LUA_PRELUDE = String.raw`
unpack = table.unpack

redis.error_reply = function(message)
  if type(message) ~= 'string' then error('wrong number or type of arguments', 2) end
  -- as Redis: the first word is the code ("-CODE text" or "CODE text"); a single word gets ERR
  local text = message:gsub('^%-', '')
  local space = text:find(' ', 1, true)
  local code, rest = 'ERR', text
  if space then code, rest = text:sub(1, space - 1), text:sub(space + 1) end
  return { err = code .. ' ' .. rest:gsub('[\r\n]+$', '') }
end

redis.status_reply = function(message)
  if type(message) ~= 'string' then error('wrong number or type of arguments', 2) end
  return { ok = message }
end

redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.log = function() end
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3
redis.set_repl = function() end
redis.replicate_commands = function() return true end

cjson = {}
do
  local null = setmetatable({}, { __tostring = function() return 'userdata: (nil)' end })
  cjson.null = null

  local escapes = {
    ['"'] = '\\"', ['\\'] = '\\\\', ['/'] = '\\/',
    ['\b'] = '\\b', ['\f'] = '\\f', ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t',
  }
  local function encode_string(s)
    local escaped = s:gsub('[%c"\\/]', function(c) return escapes[c] or string.format('\\u%04x', c:byte()) end)
    return '"' .. escaped .. '"'
  end

  local function encode_number(n)
    if n ~= n or n == math.huge or n == -math.huge then
      error('Cannot serialise number: must not be NaN or Infinity', 0)
    end
    return string.format('%.14g', n)
  end

  -- an array when every key is a positive integer (holes become null), as cjson does
  local function array_length(t)
    local max, count = 0, 0
    for k in pairs(t) do
      if type(k) ~= 'number' or k < 1 or math.floor(k) ~= k then return nil end
      if k > max then max = k end
      count = count + 1
    end
    if max > 10 and max > count * 2 then error('Cannot serialise table: excessively sparse array', 0) end
    return max
  end

  local encode
  encode = function(value, depth)
    local kind = type(value)
    if value == nil or value == null then return 'null' end
    if kind == 'boolean' then return tostring(value) end
    if kind == 'number' then return encode_number(value) end
    if kind == 'string' then return encode_string(value) end
    if kind ~= 'table' then error('Cannot serialise ' .. kind .. ': type not supported', 0) end
    if depth > 1000 then error('Cannot serialise, excessive nesting (1001)', 0) end
    local out = {}
    local length = array_length(value)
    if length and length > 0 then
      for i = 1, length do out[i] = encode(value[i], depth + 1) end
      return '[' .. table.concat(out, ',') .. ']'
    end
    for k, v in pairs(value) do
      local key = k
      if type(k) == 'number' then key = encode_number(k)
      elseif type(k) ~= 'string' then error('Cannot serialise table: table key must be a number or string', 0) end
      out[#out + 1] = encode_string(key) .. ':' .. encode(v, depth + 1)
    end
    return '{' .. table.concat(out, ',') .. '}'
  end

  cjson.encode = function(value)
    return encode(value, 1)
  end

  local function fail(what, at)
    error(string.format('Expected %s but found invalid token at character %d', what, at), 0)
  end
  local function skip(s, i)
    return s:find('[^ \t\r\n]', i) or #s + 1
  end
  local simple = { b = '\b', f = '\f', n = '\n', r = '\r', t = '\t', ['"'] = '"', ['\\'] = '\\', ['/'] = '/' }

  local function decode_string(s, i)
    local out, j = {}, i + 1
    while true do
      local c = s:sub(j, j)
      if c == '' then fail('string end', i) end
      if c == '"' then return table.concat(out), j + 1 end
      if c == '\\' then
        local e = s:sub(j + 1, j + 1)
        if simple[e] then
          out[#out + 1] = simple[e]
          j = j + 2
        elseif e == 'u' then
          local code = #s:sub(j + 2, j + 5) == 4 and tonumber(s:sub(j + 2, j + 5), 16)
          if not code then fail('unicode escape', j) end
          j = j + 6
          if code >= 0xD800 and code <= 0xDBFF and s:sub(j, j + 1) == '\\u' then
            local low = tonumber(s:sub(j + 2, j + 5), 16)
            if low and low >= 0xDC00 and low <= 0xDFFF then
              code = 0x10000 + (code - 0xD800) * 0x400 + (low - 0xDC00)
              j = j + 6
            end
          end
          out[#out + 1] = utf8.char(code)
        else
          fail('escape', j)
        end
      else
        local stop = s:find('["\\]', j) or #s + 1
        out[#out + 1] = s:sub(j, stop - 1)
        j = stop
      end
    end
  end

  local decode_value
  decode_value = function(s, i)
    i = skip(s, i)
    local c = s:sub(i, i)
    if c == '"' then return decode_string(s, i) end
    if c == '{' then
      local object = {}
      i = skip(s, i + 1)
      if s:sub(i, i) == '}' then return object, i + 1 end
      while true do
        i = skip(s, i)
        if s:sub(i, i) ~= '"' then fail('object key string', i) end
        local key
        key, i = decode_string(s, i)
        i = skip(s, i)
        if s:sub(i, i) ~= ':' then fail('colon', i) end
        object[key], i = decode_value(s, i + 1)
        i = skip(s, i)
        local sep = s:sub(i, i)
        if sep == '}' then return object, i + 1 end
        if sep ~= ',' then fail('comma or object end', i) end
        i = i + 1
      end
    end
    if c == '[' then
      local array = {}
      i = skip(s, i + 1)
      if s:sub(i, i) == ']' then return array, i + 1 end
      while true do
        array[#array + 1], i = decode_value(s, i)
        i = skip(s, i)
        local sep = s:sub(i, i)
        if sep == ']' then return array, i + 1 end
        if sep ~= ',' then fail('comma or array end', i) end
        i = i + 1
      end
    end
    if s:sub(i, i + 3) == 'true' then return true, i + 4 end
    if s:sub(i, i + 4) == 'false' then return false, i + 5 end
    if s:sub(i, i + 3) == 'null' then return null, i + 4 end
    local text = s:match('^-?%d+%.?%d*[eE]?[-+]?%d*', i)
    local number = text and tonumber(text)
    if not number then fail('value', i) end
    -- Redis's Lua has one number type: 2.0 prints as 2 there, so keep whole numbers integers
    return math.tointeger(number) or number, i + #text
  end

  cjson.decode = function(s)
    if type(s) ~= 'string' then error('bad argument #1 to decode (string expected)', 2) end
    local value, i = decode_value(s, 1)
    i = skip(s, i)
    if i <= #s then fail('the end', i) end
    return value
  end
end

setmetatable(_G, {
  __index = function(_, name)
    error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
  end,
  __newindex = function()
    error('Attempt to modify a readonly table', 2)
  end,
})
`;
