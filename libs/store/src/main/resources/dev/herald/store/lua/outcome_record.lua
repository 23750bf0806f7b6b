-- Records the final outcome of one target of one message, exactly once.
-- KEYS[1] msg:<id> status hash, KEYS[2] done:<id> (target -> batch), KEYS[3] stats:<app>.
-- ARGV[1] target key, ARGV[2] batch number, ARGV[3] outcome field (sent|failed|expired|handed; handed is
-- not final: an MQTT target handed to the connection manager, settled later by box_settle.lua),
-- ARGV[4] reason or '', ARGV[5] 1 if the token was removed from the registry, ARGV[6] done-set TTL (s),
-- ARGV[7] completion time (ms). With ARGV[3] = 'skip' only the already-recorded cases apply.
-- Returns 1 recorded; 0 already recorded by this batch (a redelivery); 2 the same target came in
-- another batch of this message (a duplicate from audience expansion: it is not counted twice,
-- and the message's total shrinks by one so completion is still detected); 4 the status record is gone.

-- Completes the message once its total is final and every target has an outcome.
local function completeIfDone()
  local s = redis.call('HMGET', KEYS[1], 'total', 'sent', 'failed', 'expired', 'expanded', 'delivered')
  local done = (tonumber(s[2]) or 0) + (tonumber(s[3]) or 0) + (tonumber(s[4]) or 0) + (tonumber(s[6]) or 0)
  if s[5] == '1' and tonumber(s[1]) and done >= tonumber(s[1]) then
    redis.call('HSETNX', KEYS[1], 'completedAt', ARGV[7])
  end
end
-- A status record that is gone (expired, or discarded because the send was refused) is not
-- recreated: it would have no TTL and live forever.
if redis.call('EXISTS', KEYS[1]) == 0 then return 4 end
local prev = redis.call('HGET', KEYS[2], ARGV[1])
if prev then
  if prev == ARGV[2] then return 0 end
  -- Shrink the total once per (target, batch), however often this batch is redelivered. Target
  -- keys start with a channel name, so a field starting with '#' never collides with one.
  -- The duplicate may be the last target outstanding, so shrinking can complete the message.
  if redis.call('HSETNX', KEYS[2], '#dup#' .. ARGV[2] .. '#' .. ARGV[1], '1') == 1 then
    redis.call('HINCRBY', KEYS[1], 'total', -1)
    completeIfDone()
  end
  return 2
end
if ARGV[3] == 'skip' then return 3 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if redis.call('TTL', KEYS[2]) < 0 then redis.call('EXPIRE', KEYS[2], ARGV[6]) end
redis.call('HINCRBY', KEYS[1], ARGV[3], 1)
redis.call('HINCRBY', KEYS[3], ARGV[3], 1)
if ARGV[4] ~= '' then
  redis.call('HINCRBY', KEYS[1], 'reason:' .. ARGV[4], 1)
  redis.call('HINCRBY', KEYS[3], 'reason:' .. ARGV[4], 1)
end
if ARGV[5] == '1' then
  redis.call('HINCRBY', KEYS[1], 'tokensRemoved', 1)
  redis.call('HINCRBY', KEYS[3], 'tokensRemoved', 1)
end
completeIfDone()
return 1
