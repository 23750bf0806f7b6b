-- Subscribes (ARGV[4] = 'sub') or unsubscribes a registered device to/from a topic.
-- ARGV: app id, device id, topic, op. Returns 0 if the device is unknown, 1 otherwise.
local app, id, topic = ARGV[1], ARGV[2], ARGV[3]
if redis.call('EXISTS', 'dev:' .. app .. ':' .. id) == 0 then return 0 end
if ARGV[4] == 'sub' then
  redis.call('SADD', 'topic:' .. app .. ':' .. topic, id)
  redis.call('SADD', 'devtopics:' .. app .. ':' .. id, topic)
else
  redis.call('SREM', 'topic:' .. app .. ':' .. topic, id)
  redis.call('SREM', 'devtopics:' .. app .. ':' .. id, topic)
end
return 1
