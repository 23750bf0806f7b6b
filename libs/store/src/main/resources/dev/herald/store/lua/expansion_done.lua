-- Marks a message's audience as fully expanded (its total is final) and completes it if every
-- target already has an outcome (or the audience was empty).
-- KEYS[1] msg:<id>. ARGV[1] completion time (ms).
redis.call('HSET', KEYS[1], 'expanded', '1')
local s = redis.call('HMGET', KEYS[1], 'total', 'sent', 'failed', 'expired', 'delivered')
local done = (tonumber(s[2]) or 0) + (tonumber(s[3]) or 0) + (tonumber(s[4]) or 0) + (tonumber(s[5]) or 0)
if done >= (tonumber(s[1]) or 0) then
  redis.call('HSETNX', KEYS[1], 'completedAt', ARGV[1])
end
return 1
