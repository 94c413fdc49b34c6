-- results: the flat reply of a batch script, three items per device:
-- obnizId, 'ok', slave | obnizId, 'err', code

local function pushResult(out, id, slave, code)
  out[#out + 1] = id
  if slave then
    out[#out + 1] = 'ok'
    out[#out + 1] = slave
  else
    out[#out + 1] = 'err'
    out[#out + 1] = code
  end
end
