// Lua run once in each embedded dataset's Lua state, before any script: what Redis
// gives scripts and plain Lua 5.4 lacks (cjson, bit, redis.error_reply / status_reply,
// redis.log, unpack and a few other Lua 5.1 names), then the same lock on globals
// Redis 7 applies. redis.call, redis.pcall and redis.sha1hex are JavaScript
// functions set up by lua-vm.ts before this runs. Kept as a string (not a .lua
// file) so it ships inside the compiled package.
//
// Where the embedded Lua (5.4) still differs from Redis's (5.1), and how a script
// stays portable:
// - Numbers: 5.4 has 64-bit integers and floats, 5.1 one double type. Replies and
//   redis.call arguments hide it (a float 3.0 goes out as 3, a float reply is
//   truncated as Redis does), but tostring(3.0) and 'x' .. 3.0 give "3.0" here and
//   "3" on Redis: format numbers with string.format('%d', n) or tostring of an
//   integer, not of a division's result. Integer arithmetic wraps at 2^63 here and
//   loses precision past 2^53 on Redis.
// - Syntax only 5.4 has (//, &, |, ~, <<, >>, goto, <const>) does not compile on
//   Redis: do not use it.
// - string.format('%d', 2.5) fails on plain 5.4; here it truncates, as 5.1 does.
// - Absent here: cmsgpack, struct, setfenv / getfenv, loadstring, module.
//   unpack, table.getn, math.pow and bit are provided.
export const LUA_PRELUDE = String.raw`
-- Redis has no os.exit, and the host cannot honour one (lua-module.ts): gone, as on Redis.
os.exit = nil
unpack = table.unpack
table.getn = function(t) return #t end
math.pow = function(x, y) return x ^ y end

do
  -- Lua 5.1 converts a float with a fraction for %d, %x, %c …; Lua 5.4 refuses it.
  local format, mtype, unpack, pack = string.format, math.type, table.unpack, table.pack
  local function truncate(n)
    if n ~= n or n == math.huge or n == -math.huge then return n end
    return n >= 0 and math.floor(n) or math.ceil(n)
  end
  string.format = function(fmt, ...)
    local ok, result = pcall(format, fmt, ...)
    if ok then return result end
    if type(fmt) ~= 'string' then error(result, 2) end
    local args, n, pos = pack(...), 0, 1
    while true do
      local from, to, conversion = fmt:find('%%[-+ #0]*%d*%.?%d*([%a%%])', pos)
      if not from then break end
      pos = to + 1
      if conversion ~= '%' then
        n = n + 1
        if conversion:find('[dioxXc]') and mtype(args[n]) == 'float' then args[n] = truncate(args[n]) end
      end
    end
    ok, result = pcall(format, fmt, unpack(args, 1, args.n))
    if not ok then error(result, 2) end
    return result
  end
end

-- Redis's bit library (LuaBitOp): 32-bit signed results.
bit = {}
do
  local function tobit(x)
    x = math.tointeger(x) or math.floor(x)
    x = x & 0xffffffff
    if x >= 0x80000000 then x = x - 0x100000000 end
    return x
  end
  local function fold(op)
    return function(x, ...)
      local r = tobit(x)
      for i = 1, select('#', ...) do r = op(r, tobit((select(i, ...)))) end
      return tobit(r)
    end
  end
  bit.tobit = tobit
  bit.band = fold(function(a, b) return a & b end)
  bit.bor = fold(function(a, b) return a | b end)
  bit.bxor = fold(function(a, b) return a ~ b end)
  bit.bnot = function(x) return tobit(~tobit(x)) end
  bit.lshift = function(x, n) return tobit((tobit(x) & 0xffffffff) << (tobit(n) & 31)) end
  bit.rshift = function(x, n) return tobit((tobit(x) & 0xffffffff) >> (tobit(n) & 31)) end
  bit.arshift = function(x, n) return tobit(tobit(x) // (1 << (tobit(n) & 31))) end
  bit.rol = function(x, n)
    local u, s = tobit(x) & 0xffffffff, tobit(n) & 31
    return tobit((u << s) | (u >> (32 - s)))
  end
  bit.ror = function(x, n)
    local u, s = tobit(x) & 0xffffffff, tobit(n) & 31
    return tobit((u >> s) | (u << (32 - s)))
  end
  bit.bswap = function(x)
    local u = tobit(x) & 0xffffffff
    return tobit(((u & 0xff) << 24) | ((u & 0xff00) << 8) | ((u >> 8) & 0xff00) | (u >> 24))
  end
  bit.tohex = function(x, n)
    n = n or 8
    local upper = n < 0
    if upper then n = -n end
    local s = string.format(upper and '%08X' or '%08x', tobit(x) & 0xffffffff)
    return s:sub(-n)
  end
end

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
