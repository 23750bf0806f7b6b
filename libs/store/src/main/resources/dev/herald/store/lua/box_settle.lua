-- Settles one message to an MQTT device for good: removes it from the device's box and counts the
-- target's final outcome (delivered on the device's PUBACK, expired, or failed) exactly once.
-- KEYS[1] cm:box:{app/device}, KEYS[2] cm:boxm:{app/device}, KEYS[3] msg:<id>, KEYS[4] done:<id>,
-- KEYS[5] stats:<app>. ARGV[1] message id, ARGV[2] target key, ARGV[3] outcome field
-- (delivered|expired|failed), ARGV[4] reason or '', ARGV[5] now (ms), ARGV[6] done-map TTL (s).
-- Returns 1 counted, 0 already settled, 4 the status record is gone (the box entry is removed anyway).
local id = ARGV[1]
redis.call('ZREM', KEYS[1], id)
local key = redis.call('HGET', KEYS[2], 'k:' .. id)
if key and redis.call('HGET', KEYS[2], 'c:' .. key) == id then redis.call('HDEL', KEYS[2], 'c:' .. key) end
redis.call('HDEL', KEYS[2], 'm:' .. id, 'x:' .. id, 'k:' .. id)
if redis.call('EXISTS', KEYS[3]) == 0 then return 4 end
if redis.call('HSETNX', KEYS[4], '#final#' .. ARGV[2], ARGV[3]) == 0 then return 0 end
if redis.call('TTL', KEYS[4]) < 0 then redis.call('EXPIRE', KEYS[4], ARGV[6]) end
redis.call('HINCRBY', KEYS[3], ARGV[3], 1)
redis.call('HINCRBY', KEYS[5], ARGV[3], 1)
if ARGV[4] ~= '' then
  redis.call('HINCRBY', KEYS[3], 'reason:' .. ARGV[4], 1)
  redis.call('HINCRBY', KEYS[5], 'reason:' .. ARGV[4], 1)
end
local s = redis.call('HMGET', KEYS[3], 'total', 'sent', 'failed', 'expired', 'expanded', 'delivered')
local done = (tonumber(s[2]) or 0) + (tonumber(s[3]) or 0) + (tonumber(s[4]) or 0) + (tonumber(s[6]) or 0)
if s[5] == '1' and tonumber(s[1]) and done >= tonumber(s[1]) then
  redis.call('HSETNX', KEYS[3], 'completedAt', ARGV[5])
end
return 1
