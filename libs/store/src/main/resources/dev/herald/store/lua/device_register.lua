-- Registers or updates a device, keeping the token index and topic sets in step with it.
-- ARGV: app id, device id, channel, token, updatedAt (ms), topics...
-- Returns 1 when the device is new, 0 when it was updated.
local app, id, channel, token = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local dev = 'dev:' .. app .. ':' .. id
local old = redis.call('HMGET', dev, 'channel', 'token')
local created = 1
if old[1] then
  created = 0
  local oldTok = 'tok:' .. app .. ':' .. old[1] .. ':' .. old[2]
  if redis.call('GET', oldTok) == id then redis.call('DEL', oldTok) end
end
local topicsKey = 'devtopics:' .. app .. ':' .. id
for _, t in ipairs(redis.call('SMEMBERS', topicsKey)) do
  redis.call('SREM', 'topic:' .. app .. ':' .. t, id)
end
redis.call('DEL', topicsKey)
redis.call('HSET', dev, 'channel', channel, 'token', token, 'updatedAt', ARGV[5])
redis.call('SET', 'tok:' .. app .. ':' .. channel .. ':' .. token, id)
for i = 6, #ARGV do
  redis.call('SADD', 'topic:' .. app .. ':' .. ARGV[i], id)
  redis.call('SADD', topicsKey, ARGV[i])
end
return created
