-- Reads an MQTT device's box in arrival order.
-- KEYS[1] cm:box:{app/device}, KEYS[2] cm:boxm:{app/device}.
-- Returns {id, payload, expiry ms, ...} for every entry.
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local v = redis.call('HMGET', KEYS[2], 'm:' .. id, 'x:' .. id)
  if v[1] then
    table.insert(out, id)
    table.insert(out, v[1])
    table.insert(out, v[2])
  end
end
return out
