-- Re-indexes a box in cm:expiries after a sweep: its earliest remaining expiry, or out of the index
-- when empty. KEYS[1] cm:box:{app/device}, KEYS[2] cm:boxm:{app/device}, KEYS[3] cm:expiries.
local earliest = nil
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local x = tonumber(redis.call('HGET', KEYS[2], 'x:' .. id))
  if x and (earliest == nil or x < earliest) then earliest = x end
end
if earliest == nil then
  redis.call('ZREM', KEYS[3], KEYS[1])
else
  redis.call('ZADD', KEYS[3], earliest, KEYS[1])
end
return 1
