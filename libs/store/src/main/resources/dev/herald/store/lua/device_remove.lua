-- Removes a device with its token index entry and topic memberships.
-- ARGV[1] app id, ARGV[2] device id, or '' to find the device by ARGV[3] channel and ARGV[4] token
-- (a token the provider reported dead: removed only if the device still has that token).
-- Returns 1 if a device was removed, 0 otherwise.
local app, id = ARGV[1], ARGV[2]
if id == '' then
  id = redis.call('GET', 'tok:' .. app .. ':' .. ARGV[3] .. ':' .. ARGV[4])
  if not id then return 0 end
end
local dev = 'dev:' .. app .. ':' .. id
local cur = redis.call('HMGET', dev, 'channel', 'token')
if not cur[1] then return 0 end
if ARGV[2] == '' and (cur[1] ~= ARGV[3] or cur[2] ~= ARGV[4]) then return 0 end
local tok = 'tok:' .. app .. ':' .. cur[1] .. ':' .. cur[2]
if redis.call('GET', tok) == id then redis.call('DEL', tok) end
local topicsKey = 'devtopics:' .. app .. ':' .. id
for _, t in ipairs(redis.call('SMEMBERS', topicsKey)) do
  redis.call('SREM', 'topic:' .. app .. ':' .. t, id)
end
redis.call('DEL', topicsKey, dev)
return 1
