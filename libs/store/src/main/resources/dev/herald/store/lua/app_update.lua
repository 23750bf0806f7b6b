-- Changes an existing app atomically and tells every process's local cache.
-- KEYS[1] app hash. ARGV[1] app id, ARGV[2] number of field/value pairs to set (n),
-- then n pairs, then field names to delete. Returns the new version, or -1 if the app is unknown.
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local n = tonumber(ARGV[2])
local i = 3
for _ = 1, n do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  i = i + 2
end
while i <= #ARGV do
  redis.call('HDEL', KEYS[1], ARGV[i])
  i = i + 1
end
local version = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('PUBLISH', 'herald:app-changed', ARGV[1])
return version
