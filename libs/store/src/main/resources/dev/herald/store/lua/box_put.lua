-- Puts one message into an MQTT device's box (the per-device store the connection manager delivers
-- from), then says which live connection-manager node holds the device.
-- KEYS[1] cm:box:{app/device} (zset: message id -> arrival sequence), KEYS[2] cm:boxm:{app/device}
-- (hash: m:<id> payload, x:<id> expiry ms, k:<id> collapse key, c:<key> id holding that key, #seq),
-- KEYS[3] cm:session:{app/device} ("<node>|<connection>"), KEYS[4] done:<message id>.
-- ARGV[1] message id, ARGV[2] payload, ARGV[3] expiry (epoch ms), ARGV[4] collapse key or '',
-- ARGV[5] most entries kept, ARGV[6] target key, ARGV[7] now (epoch ms).
-- Returns {node or '', 'c:<id>'..., 'e:<id>'...}: the node to notify (empty when the device has no
-- live session), ids replaced by the collapse key (c:) and ids evicted because the box was full (e:).
-- Putting again a message that is in the box or already settled for this target changes nothing
-- (a redelivered gateway batch).
local id = ARGV[1]
local result = {''}
local function drop(old)
  redis.call('ZREM', KEYS[1], old)
  local key = redis.call('HGET', KEYS[2], 'k:' .. old)
  if key and redis.call('HGET', KEYS[2], 'c:' .. key) == old then redis.call('HDEL', KEYS[2], 'c:' .. key) end
  redis.call('HDEL', KEYS[2], 'm:' .. old, 'x:' .. old, 'k:' .. old)
end
if redis.call('HEXISTS', KEYS[2], 'm:' .. id) == 0 and redis.call('HEXISTS', KEYS[4], '#final#' .. ARGV[6]) == 0 then
  if ARGV[4] ~= '' then
    local old = redis.call('HGET', KEYS[2], 'c:' .. ARGV[4])
    if old then
      drop(old)
      table.insert(result, 'c:' .. old)
    end
    redis.call('HSET', KEYS[2], 'c:' .. ARGV[4], id, 'k:' .. id, ARGV[4])
  end
  local seq = redis.call('HINCRBY', KEYS[2], '#seq', 1)
  redis.call('ZADD', KEYS[1], seq, id)
  redis.call('HSET', KEYS[2], 'm:' .. id, ARGV[2], 'x:' .. id, ARGV[3])
  while redis.call('ZCARD', KEYS[1]) > tonumber(ARGV[5]) do
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
    drop(oldest)
    table.insert(result, 'e:' .. oldest)
  end
  -- The expiry index (cm:expiries, box key -> earliest expiry) lets a sweeper settle expired
  -- entries of devices that never come back.
  redis.call('ZADD', 'cm:expiries', 'LT', ARGV[3], KEYS[1])
  -- The box lives an hour past its longest-lived entry: long enough for the expiry sweeper to
  -- settle that entry (a box gone with its entries unsettled would leave their messages pending).
  local expiry = tonumber(ARGV[3]) + 3600000
  for i = 1, 2 do
    local pttl = redis.call('PTTL', KEYS[i])
    if pttl < 0 or tonumber(ARGV[7]) + pttl < expiry then redis.call('PEXPIREAT', KEYS[i], expiry) end
  end
end
local session = redis.call('GET', KEYS[3])
if session then
  local node = string.match(session, '^([^|]+)')
  if node and redis.call('EXISTS', 'cm:node:' .. node) == 1 then result[1] = node end
end
return result
