#!lua name=herald
-- The store's one Lua library (Redis 7 functions), loaded with FUNCTION LOAD REPLACE at startup by
-- dev.herald.store.redis.HeraldFunctions. Every function touches the keys of ONE hash slot: the keys
-- it is given share a hash tag, and keys it builds from a prefix it is given (dev.herald.store.keys
-- .RedisKeys names them all) carry the same tag. Time comes from the caller (an injected clock).

-- Return codes of outcome_record and outcome_settle: dev.herald.store.status.Recording in Java.
local ALREADY_RECORDED, RECORDED, DUPLICATE_TARGET, NOT_RECORDED, STATUS_GONE = 0, 1, 2, 3, 4

-- "Complete", written once: the audience is fully expanded (its total is final; no total is an
-- empty audience) and every target has a final outcome. completedAt is the fact every reader uses.
local function complete_if_done(msg, now)
  local s = redis.call('HMGET', msg, 'expanded', 'total', 'sent', 'failed', 'expired', 'delivered', 'cancelled')
  if s[1] ~= '1' then return end
  local done = (tonumber(s[3]) or 0) + (tonumber(s[4]) or 0) + (tonumber(s[5]) or 0) + (tonumber(s[6]) or 0)
      + (tonumber(s[7]) or 0)
  if done >= (tonumber(s[2]) or 0) then redis.call('HSETNX', msg, 'completedAt', now) end
end

-- Counts one outcome into a counter hash (a message's status, or an app's statistics).
local function count(hash, field, reason, token_removed)
  redis.call('HINCRBY', hash, field, 1)
  if reason ~= '' then redis.call('HINCRBY', hash, 'reason:' .. reason, 1) end
  if token_removed == '1' then redis.call('HINCRBY', hash, 'tokensRemoved', 1) end
end

local function expire_once(key, seconds)
  if redis.call('TTL', key) < 0 then redis.call('EXPIRE', key, seconds) end
end

-- Records the final outcome of one target of one message, exactly once.
-- KEYS msg:{id}, done:{id} (target -> batch). ARGV target key, batch, outcome field (sent|failed|
-- expired|cancelled|handed; handed is not final: an MQTT target in its device's box, settled later by
-- outcome_settle) or 'skip' (only the already-recorded cases apply), reason or '', '1' if the token
-- was removed, done-map TTL (s), now (ms).
-- A status record that is gone (expired, or discarded because the send was refused) is not
-- recreated: it would have no TTL and live forever.
-- record_target is its part for one target once msg is known to exist; it returns the code and
-- whether the message's counts changed (so complete_if_done must run).
local function record_target(msg, done, target, batch, field, reason, token_removed)
  local prev = redis.call('HGET', done, target)
  if prev then
    if prev == batch then return ALREADY_RECORDED, false end
    -- The same target in another batch (a duplicate from audience expansion): not counted twice,
    -- the total shrinks once per (target, batch) however often this batch is redelivered, and the
    -- duplicate may be the last target outstanding. Target keys start with a channel name, so a
    -- field starting with '#' never collides with one.
    if redis.call('HSETNX', done, '#dup#' .. batch .. '#' .. target, '1') == 1 then
      redis.call('HINCRBY', msg, 'total', -1)
      return DUPLICATE_TARGET, true
    end
    return DUPLICATE_TARGET, false
  end
  if field == 'skip' then return NOT_RECORDED, false end
  redis.call('HSET', done, target, batch)
  count(msg, field, reason, token_removed)
  return RECORDED, true
end

local function outcome_record(keys, args)
  local msg, done = keys[1], keys[2]
  if redis.call('EXISTS', msg) == 0 then return STATUS_GONE end
  local code, changed = record_target(msg, done, args[1], args[2], args[3], args[4], args[5])
  if code == RECORDED then expire_once(done, args[6]) end
  if changed then complete_if_done(msg, args[7]) end
  return code
end

-- Records the outcomes of many targets of one message, each exactly as outcome_record would, in one
-- step: the gateway sends the outcomes that finished while its previous call was on its way.
-- KEYS msg:{id}, done:{id}. ARGV done-map TTL (s), now (ms), then five per target: target key, batch,
-- outcome field, reason or '', '1' if the token was removed. Returns one code per target, in order.
-- The done-map is read and written once for the whole group and the counts added once per field:
-- a fan-out records each of its targets through here, and every command inside a function costs a
-- few microseconds of Redis's one thread, so per-target commands would cost more than the rest.
-- Targets are taken in order, so a target twice in the group sees its first entry (as recorded).
local function outcome_record_all(keys, args)
  local msg, done, codes = keys[1], keys[2], {}
  if redis.call('EXISTS', msg) == 0 then
    for _ = 3, #args, 5 do codes[#codes + 1] = STATUS_GONE end
    return codes
  end
  local targets = {}
  for i = 3, #args, 5 do targets[#targets + 1] = args[i] end
  if #targets == 0 then return codes end
  local stored = redis.call('HMGET', done, unpack(targets))
  local entries, writes, counts, changed = {}, {}, {}, false
  for n, target in ipairs(targets) do
    local i = 3 + (n - 1) * 5
    local batch, field, reason = args[i + 1], args[i + 2], args[i + 3]
    local prev = entries[target]
    if prev == nil then prev = stored[n] end
    local code
    if prev then
      if prev == batch then
        code = ALREADY_RECORDED
      else
        -- The same target in another batch (see record_target): the total shrinks once per (target, batch).
        code = DUPLICATE_TARGET
        if redis.call('HSETNX', done, '#dup#' .. batch .. '#' .. target, '1') == 1 then
          redis.call('HINCRBY', msg, 'total', -1)
          changed = true
        end
      end
    elseif field == 'skip' then
      code = NOT_RECORDED
    else
      code = RECORDED
      entries[target] = batch
      writes[#writes + 1] = target
      writes[#writes + 1] = batch
      counts[field] = (counts[field] or 0) + 1
      if reason ~= '' then counts['reason:' .. reason] = (counts['reason:' .. reason] or 0) + 1 end
      if args[i + 4] == '1' then counts.tokensRemoved = (counts.tokensRemoved or 0) + 1 end
    end
    codes[n] = code
  end
  if #writes > 0 then
    redis.call('HSET', done, unpack(writes))
    for field, count in pairs(counts) do redis.call('HINCRBY', msg, field, count) end
    expire_once(done, args[1])
    changed = true
  end
  if changed then complete_if_done(msg, args[2]) end
  return codes
end

-- Settles an MQTT target for good (delivered on the device's PUBACK, expired, or failed), once.
-- KEYS msg:{id}, done:{id}. ARGV target key, outcome field, reason or '', done-map TTL (s), now (ms).
local function outcome_settle(keys, args)
  local msg, done = keys[1], keys[2]
  if redis.call('EXISTS', msg) == 0 then return STATUS_GONE end
  if redis.call('HSETNX', done, '#final#' .. args[1], args[2]) == 0 then return ALREADY_RECORDED end
  expire_once(done, args[4])
  count(msg, args[2], args[3], '0')
  complete_if_done(msg, args[5])
  return RECORDED
end

-- Whether an MQTT target was settled for good (so a redelivered batch does not box it again).
-- KEYS done:{id}. ARGV target key. Returns 1 or 0.
local function outcome_settled(keys, args)
  return redis.call('HEXISTS', keys[1], '#final#' .. args[1])
end

-- An app's running totals, counted after the message's slot said "newly recorded", and the same
-- counts in its current minute's and hour's buckets (the console's charts over time).
-- KEYS stats:{app}, statsm:{app}:<minute>, statsh:{app}:<hour>. ARGV outcome field, reason or '',
-- '1' if the token was removed, minute bucket TTL (s), hour bucket TTL (s).
local function stats_count(keys, args)
  count(keys[1], args[1], args[2], args[3])
  for i = 2, 3 do
    if keys[i] then
      count(keys[i], args[1], args[2], args[3])
      expire_once(keys[i], args[i + 2])
    end
  end
  return 1
end

-- An app's running totals for a group of outcomes (outcome_record_all's), in one step, and the same
-- counts in its current minute's and hour's buckets (as stats_count).
-- KEYS stats:{app}, statsm:{app}:<minute>, statsh:{app}:<hour>. ARGV minute bucket TTL (s),
-- hour bucket TTL (s), then counter field, increment; repeated.
local function stats_add(keys, args)
  for k = 1, #keys do
    for i = 3, #args, 2 do redis.call('HINCRBY', keys[k], args[i], args[i + 1]) end
    if k > 1 then expire_once(keys[k], args[k - 1]) end
  end
  return 1
end

-- Marks a message's audience as fully expanded (its total is final) and completes it if done.
-- KEYS msg:{id}. ARGV now (ms).
local function expansion_done(keys, args)
  redis.call('HSET', keys[1], 'expanded', '1')
  complete_if_done(keys[1], args[1])
  return 1
end

-- Saves an expander's progress and counts the targets it just queued, atomically, so a resumed
-- expansion neither skips nor double-counts a page.
-- KEYS expand:{id}, msg:{id}. ARGV next cursor, next batch, targets queued, progress TTL (s).
local function expansion_advance(keys, args)
  redis.call('HSET', keys[1], 'cursor', args[1], 'batch', args[2])
  redis.call('EXPIRE', keys[1], args[4])
  if redis.call('EXISTS', keys[2]) == 1 then redis.call('HINCRBY', keys[2], 'total', args[3]) end
  return 1
end

-- Changes an existing app and tells every process's local cache.
-- KEYS app:{id}. ARGV changes channel, app id, n, then n field/value pairs, then fields to delete.
-- Returns the new version, or nil if the app is unknown.
local function app_update(keys, args)
  if redis.call('EXISTS', keys[1]) == 0 then return nil end
  local i = 4
  for _ = 1, tonumber(args[3]) do
    redis.call('HSET', keys[1], args[i], args[i + 1])
    i = i + 2
  end
  while i <= #args do
    redis.call('HDEL', keys[1], args[i])
    i = i + 1
  end
  local version = redis.call('HINCRBY', keys[1], 'version', 1)
  redis.call('PUBLISH', args[1], args[2])
  return version
end

-- Re-encryption under a new credential key: KEYS app:{id}. ARGV field/old/new triples; a field is
-- replaced only if it still holds the value that was read (a credential set meanwhile wins). The
-- plaintext is unchanged, so no version bump and no change notification. Returns fields replaced.
local function app_reseal(keys, args)
  local replaced = 0
  for i = 1, #args, 3 do
    if redis.call('HGET', keys[1], args[i]) == args[i + 1] then
      redis.call('HSET', keys[1], args[i], args[i + 2])
      replaced = replaced + 1
    end
  end
  return replaced
end

-- Device registry: the device hash, its topic set, the topic sets and the token index of one app
-- share the app's hash tag, so a registration stays one atomic step.
local function leave_topics(devtopics, topic_prefix, id)
  for _, t in ipairs(redis.call('SMEMBERS', devtopics)) do
    redis.call('SREM', topic_prefix .. t, id)
  end
  redis.call('DEL', devtopics)
end

local function drop_token(token_prefix, channel, token, id)
  local tok = token_prefix .. channel .. ':' .. token
  if redis.call('GET', tok) == id then redis.call('DEL', tok) end
end

-- Additions a registration leaves for the end of its call, so that a batch of devices makes one
-- SADD per topic and one ZADD in all rather than one per device: Redis runs a bulk import one device
-- at a time, and each command saved is paid once per device. `ids` names the devices with additions
-- waiting; a device registered twice in one batch sends them first (see register_device).
local function new_additions(topic_prefix, devseen)
  return {topic_prefix = topic_prefix, devseen = devseen, members = {}, seen = {}, ids = {}}
end

local function flush_additions(adds)
  for t, ids in pairs(adds.members) do
    for i = 1, #ids, 1000 do redis.call('SADD', adds.topic_prefix .. t, unpack(ids, i, math.min(i + 999, #ids))) end
  end
  for i = 1, #adds.seen, 1000 do redis.call('ZADD', adds.devseen, unpack(adds.seen, i, math.min(i + 999, #adds.seen))) end
  adds.members, adds.seen, adds.ids = {}, {}, {}
end

-- Moves a device's topic memberships from `had` to `topics`, on both sides (each topic's set and the
-- device's own set), writing only the topics that change: re-importing the same audience writes none.
local function move_topics(devtopics, adds, id, had, topics)
  local wanted = {}
  for _, t in ipairs(topics) do wanted[t] = true end
  local left = {}
  for _, t in ipairs(had) do
    if wanted[t] then
      wanted[t] = false   -- a member already
    else
      redis.call('SREM', adds.topic_prefix .. t, id)
      left[#left + 1] = t
    end
  end
  if #left > 0 then redis.call('SREM', devtopics, unpack(left)) end
  local joined = {}
  for _, t in ipairs(topics) do
    if wanted[t] then
      wanted[t] = false
      local members = adds.members[t]
      if not members then
        members = {}
        adds.members[t] = members
      end
      members[#members + 1] = id
      joined[#joined + 1] = t
    end
  end
  if #joined > 0 then redis.call('SADD', devtopics, unpack(joined)) end
end

-- Registers or replaces one device (its token, topics and registration time); 1 when it is new.
-- KEYS of a registration: dev:{app}:<id>, devtopics:{app}:<id>, devseen:{app} (device -> last
-- refresh). zone: nil keeps the device's time zone (device_zone sets it), '' clears it, else sets it.
-- Every writer creates and deletes a device's hash and its topic set together, so a device without
-- a hash has no topics to leave. A new device costs four commands here, an unchanged re-import four,
-- plus its share of the batch's additions.
local function register_device(dev, devtopics, adds, token_prefix, id, channel, token, now, topics, zone)
  local old = redis.call('HMGET', dev, 'channel', 'token', 'timeZone')
  local created, had = 1, {}
  if old[1] then
    created = 0
    -- The same device earlier in this batch: its additions must land before this one leaves topics.
    if adds.ids[id] then flush_additions(adds) end
    if old[1] ~= channel or old[2] ~= token then drop_token(token_prefix, old[1], old[2], id) end
    had = redis.call('SMEMBERS', devtopics)
  end
  move_topics(devtopics, adds, id, had, topics)
  if zone and zone ~= '' then
    redis.call('HSET', dev, 'channel', channel, 'token', token, 'updatedAt', now, 'timeZone', zone)
  else
    redis.call('HSET', dev, 'channel', channel, 'token', token, 'updatedAt', now)
    if zone == '' and old[3] then redis.call('HDEL', dev, 'timeZone') end
  end
  if adds.devseen then
    adds.seen[#adds.seen + 1] = now
    adds.seen[#adds.seen + 1] = id
  end
  adds.ids[id] = true
  redis.call('SET', token_prefix .. channel .. ':' .. token, id)
  return created
end

-- Registers or updates one device (a re-registration is the token's refresh). KEYS dev:{app}:<id>,
-- devtopics:{app}:<id>, devseen:{app}. ARGV token prefix, topic prefix, device id, channel, token,
-- updatedAt (ms), topics... Returns 1 new, 0 updated.
local function device_register(keys, args)
  local adds = new_additions(args[2], keys[3])
  local created = register_device(keys[1], keys[2], adds, args[1], args[3], args[4], args[5], args[6],
      {unpack(args, 7)}, nil)
  flush_additions(adds)
  return created
end

-- A bulk import's batch of one app's devices (all under the app's hash tag, so one call per batch):
-- keys[1] the app's devseen index; args: token, topic, device and device-topics prefixes, now, then
-- per device: id, channel, token, time zone ('' for none), topic count, the topics. Each device is
-- replaced as a single registration would (its time zone included). Returns how many were new.
local function device_import(keys, args)
  local token_prefix, dev_prefix, devtopics_prefix, now = args[1], args[3], args[4], args[5]
  local adds = new_additions(args[2], keys[1])
  local created, i = 0, 6
  while i <= #args do
    local id, ntopics = args[i], tonumber(args[i + 4])
    created = created + register_device(dev_prefix .. id, devtopics_prefix .. id, adds, token_prefix, id,
        args[i + 1], args[i + 2], now, {unpack(args, i + 5, i + 4 + ntopics)}, args[i + 3])
    i = i + 5 + ntopics
  end
  flush_additions(adds)
  return created
end

-- Removes a device with its token index entry and topic memberships. KEYS dev:{app}:<id>,
-- devtopics:{app}:<id>, devseen:{app}. ARGV token prefix, topic prefix, device id, then (a token the provider
-- reported dead) channel and token: removed only if the device still has that token.
-- Returns 1 if a device was removed, 0 otherwise.
local function device_remove(keys, args)
  local dev, devtopics, id = keys[1], keys[2], args[3]
  local cur = redis.call('HMGET', dev, 'channel', 'token')
  if not cur[1] then return 0 end
  if args[4] and (cur[1] ~= args[4] or cur[2] ~= args[5]) then return 0 end
  drop_token(args[1], cur[1], cur[2], id)
  leave_topics(devtopics, args[2], id)
  redis.call('DEL', dev)
  if keys[3] then redis.call('ZREM', keys[3], id) end
  return 1
end

-- Subscribes or unsubscribes a registered device. KEYS dev:{app}:<id>, devtopics:{app}:<id>,
-- topic:{app}:<topic>. ARGV device id, topic, 'sub' or 'unsub'. Returns 0 if the device is unknown.
-- Reads many devices of one app in one step (a page of a fan-out's audience): for each key, the
-- fields named in ARGV, nil where missing. KEYS dev:{app}:<id>... ARGV field names.
local function device_read(keys, args)
  local rows = {}
  for i = 1, #keys do rows[i] = redis.call('HMGET', keys[i], unpack(args)) end
  return rows
end

local function device_topic(keys, args)
  if redis.call('EXISTS', keys[1]) == 0 then return 0 end
  local op = args[3] == 'sub' and 'SADD' or 'SREM'
  redis.call(op, keys[3], args[1])
  redis.call(op, keys[2], args[2])
  return 1
end

-- The MQTT box of one device: cm:box:{app/device} (zset: message id -> arrival sequence) and
-- cm:boxm:{app/device} (hash: m:<id> payload, x:<id> expiry ms, k:<id> collapse key,
-- c:<key> id holding that key, #seq).
local function box_drop(box, boxm, id)
  redis.call('ZREM', box, id)
  local key = redis.call('HGET', boxm, 'k:' .. id)
  if key and redis.call('HGET', boxm, 'c:' .. key) == id then redis.call('HDEL', boxm, 'c:' .. key) end
  redis.call('HDEL', boxm, 'm:' .. id, 'x:' .. id, 'k:' .. id)
end

-- Puts one message into the box and says who holds the device.
-- KEYS box, boxm, cm:session:{app/device}. ARGV id, payload, expiry (ms), collapse key or '',
-- most entries kept, now (ms).
-- Returns {session value or '', 'c:<id>'..., 'e:<id>'...}: ids replaced by the collapse key (c:)
-- and ids evicted because the box was full (e:). Putting an id already in the box changes nothing.
local function box_put(keys, args)
  local box, boxm, id = keys[1], keys[2], args[1]
  local result = {redis.call('GET', keys[3]) or ''}
  if redis.call('HEXISTS', boxm, 'm:' .. id) == 1 then return result end
  if args[4] ~= '' then
    local old = redis.call('HGET', boxm, 'c:' .. args[4])
    if old then
      box_drop(box, boxm, old)
      table.insert(result, 'c:' .. old)
    end
    redis.call('HSET', boxm, 'c:' .. args[4], id, 'k:' .. id, args[4])
  end
  redis.call('ZADD', box, redis.call('HINCRBY', boxm, '#seq', 1), id)
  redis.call('HSET', boxm, 'm:' .. id, args[2], 'x:' .. id, args[3])
  while redis.call('ZCARD', box) > tonumber(args[5]) do
    local oldest = redis.call('ZRANGE', box, 0, 0)[1]
    box_drop(box, boxm, oldest)
    table.insert(result, 'e:' .. oldest)
  end
  -- The box lives an hour past its longest-lived entry: long enough for the expiry sweeper to
  -- settle that entry (a box gone with its entries unsettled would leave their messages pending).
  local expiry = tonumber(args[3]) + 3600000
  for _, key in ipairs({box, boxm}) do
    local pttl = redis.call('PTTL', key)
    if pttl < 0 or tonumber(args[6]) + pttl < expiry then redis.call('PEXPIREAT', key, expiry) end
  end
  return result
end

-- Removes one message from the box. KEYS box, boxm. ARGV id.
local function box_remove(keys, args)
  box_drop(keys[1], keys[2], args[1])
  return 1
end

-- The box in arrival order: {id, payload, expiry ms, ...}. KEYS box, boxm.
local function box_read(keys)
  local out = {}
  for _, id in ipairs(redis.call('ZRANGE', keys[1], 0, -1)) do
    local v = redis.call('HMGET', keys[2], 'm:' .. id, 'x:' .. id)
    if v[1] then
      table.insert(out, id)
      table.insert(out, v[1])
      table.insert(out, v[2])
    end
  end
  return out
end

-- The earliest expiry (ms) in the box, or nil when it is empty. KEYS box, boxm.
local function box_earliest(keys)
  local earliest = nil
  for _, id in ipairs(redis.call('ZRANGE', keys[1], 0, -1)) do
    local x = tonumber(redis.call('HGET', keys[2], 'x:' .. id))
    if x and (earliest == nil or x < earliest) then earliest = x end
  end
  return earliest
end

-- Deletes the key if it still holds ARGV[1] (a claim or session of the caller's own). Returns 1 if deleted.
local function delete_if_equal(keys, args)
  if redis.call('GET', keys[1]) == args[1] then return redis.call('DEL', keys[1]) end
  return 0
end

-- Replaces the key's value ARGV[1] with ARGV[2] (TTL ARGV[3] s). Returns 1 if replaced.
local function replace_if_equal(keys, args)
  if redis.call('GET', keys[1]) == args[1] then
    redis.call('SET', keys[1], args[2], 'EX', args[3])
    return 1
  end
  return 0
end

-- Cancel and the token lifecycle (docs: libs/store/README.md "Cancel" and "Token lifecycle").

-- Return codes of message_cancel: dev.herald.store.status.Cancellation in Java.
local CANCEL_MARKED, CANCEL_ALREADY, CANCEL_FINISHED, CANCEL_GONE, CANCEL_ENDED = 1, 2, 3, 4, 5

-- Marks a message cancelled, once. A message only scheduled (field scheduled = '1': nothing queued
-- yet, the scheduler has not released it) ends here: all its known targets are cancelled and it is
-- complete. Any other unfinished message keeps its mark; each gateway step reads it and ends what
-- it has not sent yet as cancelled (outcome_cancel).
-- KEYS msg:{id}. ARGV now (ms), the app asking (another app's message is as good as gone).
-- Returns {code, targets cancelled here}.
local function message_cancel(keys, args)
  local msg = keys[1]
  local s = redis.call('HMGET', msg, 'app', 'cancelledAt', 'completedAt', 'scheduled', 'total')
  if s[1] ~= args[2] then return {CANCEL_GONE, 0} end
  if s[2] then return {CANCEL_ALREADY, 0} end
  if s[3] then return {CANCEL_FINISHED, 0} end
  redis.call('HSET', msg, 'cancelledAt', args[1])
  if s[4] ~= '1' then return {CANCEL_MARKED, 0} end
  local total = tonumber(s[5]) or 0
  redis.call('HDEL', msg, 'scheduled')
  redis.call('HSET', msg, 'expanded', '1', 'total', total)
  redis.call('HINCRBY', msg, 'cancelled', total)
  complete_if_done(msg, args[1])
  return {CANCEL_ENDED, total}
end

-- The scheduler's release of a due message: 1 if it may be queued (and is no longer only
-- scheduled), 0 if it was cancelled first. KEYS msg:{id}.
local function message_release(keys)
  if redis.call('HEXISTS', keys[1], 'cancelledAt') == 1 then return 0 end
  redis.call('HDEL', keys[1], 'scheduled')
  return 1
end

-- Ends the targets of one batch of a cancelled message as cancelled, each exactly as outcome_record
-- would (a target already recorded stays as it is), in one step. KEYS msg:{id}, done:{id}.
-- ARGV batch, done-map TTL (s), now (ms), target keys... Returns the number cancelled now.
local function outcome_cancel(keys, args)
  local n = 0
  for i = 4, #args do
    if outcome_record(keys, {args[i], args[1], 'cancelled', '', '0', args[2], args[3]}) == RECORDED then n = n + 1 end
  end
  return n
end

-- Removes a device whose token went unrefreshed past the cutoff, unless it was refreshed after the
-- sweep read the index; counts it in the app's statistics. KEYS dev:{app}:<id>, devtopics:{app}:<id>,
-- devseen:{app}, stats:{app}. ARGV token prefix, topic prefix, device id, cutoff (ms). Returns 1 if removed.
local function device_remove_stale(keys, args)
  local at = tonumber(redis.call('HGET', keys[1], 'updatedAt'))
  if at == nil then
    redis.call('ZREM', keys[3], args[3])
    return 0
  end
  if at > tonumber(args[4]) then return 0 end
  device_remove(keys, {args[1], args[2], args[3]})
  redis.call('HINCRBY', keys[4], 'staleRemoved', 1)
  return 1
end

-- Rate buckets: provider quotas per app, throttled messages and the per-app API limit share one
-- token bucket, so every replica takes from the same tokens. A caller takes a whole batch's worth
-- in one call and gets what is left. The bucket holds at most `burst` tokens and refills `refill`
-- per window: with refill = limit - burst no window of that length lets more than `limit` through.
-- KEYS bucket hash (tokens, at), then optionally the "paused until" string of the same tag (a
-- provider's 429 Retry-After). ARGV now (ms), refill per window (0: unlimited, only the pause
-- applies), window (ms), burst, tokens wanted.
-- Returns {tokens granted, ms until the next token (0 if all were granted)}.
local function bucket_take(keys, args)
  local now, refill, window, burst, wanted = tonumber(args[1]), tonumber(args[2]), tonumber(args[3]),
      tonumber(args[4]), tonumber(args[5])
  if keys[2] then
    local paused = tonumber(redis.call('GET', keys[2]) or '0')
    if paused > now then return {0, paused - now} end
  end
  if refill <= 0 then return {wanted, 0} end
  local rate = refill / window
  local s = redis.call('HMGET', keys[1], 'tokens', 'at')
  local tokens, at = tonumber(s[1]) or burst, tonumber(s[2]) or now
  -- A replica whose clock is behind the last taker's refills nothing rather than going back.
  if now > at then
    tokens = math.min(burst, tokens + (now - at) * rate)
    at = now
  end
  local granted = math.min(wanted, math.floor(tokens))
  tokens = tokens - granted
  redis.call('HSET', keys[1], 'tokens', tostring(tokens), 'at', at)
  redis.call('PEXPIRE', keys[1], math.ceil(burst / rate) + window)
  if granted >= wanted then return {granted, 0} end
  return {granted, math.max(1, math.ceil((1 - (tokens - math.floor(tokens))) / rate) + (at - now))}
end

-- Pauses a bucket's taker until ARGV[1] (ms), or later if it is paused longer already.
-- KEYS the "paused until" string. Returns the time it is paused until.
local function bucket_pause(keys, args)
  local current = tonumber(redis.call('GET', keys[1]) or '0')
  local untilMs = tonumber(args[1])
  if untilMs <= current then return current end
  redis.call('SET', keys[1], args[1], 'PXAT', untilMs)
  return untilMs
end

-- Scheduled sends (dev.herald.store.schedule.ScheduledSends). The schedule is one sorted set
-- (member '<message>|<group>', score the due time in ms, group being the due time of that zone
-- group); a message's payload lives in sched:{id}, its pending due times as 'due:<group>' fields
-- of msg:{id}, the status readers see.

-- Claims up to ARGV[3] entries due at ARGV[1] (ms) by moving each to ARGV[2], the end of the
-- claimer's lease: no other replica sees it until then, and if the claimer dies before it removes
-- the entry, the entry is due again when the lease ends. KEYS schedule. Returns
-- {member, due ms, ...}.
local function schedule_claim(keys, args)
  local due = redis.call('ZRANGE', keys[1], '-inf', args[1], 'BYSCORE', 'LIMIT', 0, tonumber(args[3]), 'WITHSCORES')
  for i = 1, #due, 2 do
    redis.call('ZADD', keys[1], 'XX', args[2], due[i])
  end
  return due
end

-- One zone group of a scheduled message was published (or skipped, with 0 targets, because the
-- message was cancelled). KEYS msg:{id}, sched:{id}. ARGV group, targets published ('' when the
-- immediate send path recorded its own total), queuedAt (ISO), now (ms). The group's target count
-- is added to the total once, however often a retried claim fires it; the message is no longer
-- only scheduled (field scheduled, which a cancel reads); the last group marks a local-time
-- audience expanded (its total final) and drops the payload. Returns 1, or 0 when the group had
-- already fired or the status is gone.
local function schedule_fired(keys, args)
  local msg, sched, group = keys[1], keys[2], args[1]
  if redis.call('HDEL', msg, 'due:' .. group) == 0 then return 0 end
  if args[2] ~= '' and redis.call('HSETNX', sched, 'fired:' .. group, args[2]) == 1 then
    redis.call('HINCRBY', msg, 'total', tonumber(args[2]))
  end
  if args[2] ~= '0' then
    redis.call('HDEL', msg, 'scheduled')
    redis.call('HSETNX', msg, 'queuedAt', args[3])
  end
  for _, field in ipairs(redis.call('HKEYS', msg)) do
    if string.sub(field, 1, 4) == 'due:' then return 1 end
  end
  if args[2] ~= '' then
    redis.call('HSET', msg, 'expanded', '1')
    complete_if_done(msg, args[4])
  end
  redis.call('DEL', sched)
  return 1
end

-- A device's IANA time zone (for sends at a local time), set or ('' ) removed. KEYS dev:{app}:<id>.
-- Returns 0 if the device is unknown.
local function device_zone(keys, args)
  if redis.call('EXISTS', keys[1]) == 0 then return 0 end
  if args[1] == '' then redis.call('HDEL', keys[1], 'timeZone') else redis.call('HSET', keys[1], 'timeZone', args[1]) end
  return 1
end

-- MQTT device credentials (docs: libs/store/README.md "MQTT credentials and revocation").

-- Claims a device's session for a connection whose password was issued for generation ARGV[2], only
-- if that is the device's current generation (no key: 0). In one step with the session write, so a
-- revocation (credentials_revoke, same slot) either comes first and this refuses, or comes after and
-- finds this connection as the session's holder.
-- A granted claim also records the CONNECT's time (the device API's last MQTT connect).
-- KEYS cm:cred:{a/d}, cm:session:{a/d}, cm:connected:{a/d}. ARGV holder (<node>|<connection>), generation, now (ms).
-- Returns {1, previous holder or ''} or {0, ''} (revoked).
local function session_claim(keys, args)
  if tonumber(redis.call('GET', keys[1]) or '0') ~= tonumber(args[2]) then
    return {0, ''}
  end
  redis.call('SET', keys[3], args[3])
  return {1, redis.call('SET', keys[2], args[1], 'GET') or ''}
end

-- Revokes every password a device was issued: its generation moves on.
-- KEYS cm:cred:{a/d}, cm:session:{a/d}. Returns {new generation, holder of the session or ''}.
local function credentials_revoke(keys)
  return {redis.call('INCR', keys[1]), redis.call('GET', keys[2]) or ''}
end

redis.register_function('outcome_record', outcome_record)
redis.register_function('outcome_record_all', outcome_record_all)
redis.register_function('outcome_settle', outcome_settle)
redis.register_function{function_name = 'outcome_settled', callback = outcome_settled, flags = {'no-writes'}}
redis.register_function('stats_count', stats_count)
redis.register_function('stats_add', stats_add)
redis.register_function('expansion_done', expansion_done)
redis.register_function('expansion_advance', expansion_advance)
redis.register_function('app_update', app_update)
redis.register_function('app_reseal', app_reseal)
redis.register_function('device_register', device_register)
redis.register_function('device_import', device_import)
redis.register_function('device_remove', device_remove)
redis.register_function('device_topic', device_topic)
redis.register_function{function_name = 'device_read', callback = device_read, flags = {'no-writes'}}
redis.register_function('box_put', box_put)
redis.register_function('box_remove', box_remove)
redis.register_function{function_name = 'box_read', callback = box_read, flags = {'no-writes'}}
redis.register_function{function_name = 'box_earliest', callback = box_earliest, flags = {'no-writes'}}
redis.register_function('delete_if_equal', delete_if_equal)
redis.register_function('replace_if_equal', replace_if_equal)
redis.register_function('message_cancel', message_cancel)
redis.register_function('message_release', message_release)
redis.register_function('outcome_cancel', outcome_cancel)
redis.register_function('device_remove_stale', device_remove_stale)
redis.register_function('bucket_take', bucket_take)
redis.register_function('bucket_pause', bucket_pause)
redis.register_function('schedule_claim', schedule_claim)
redis.register_function('schedule_fired', schedule_fired)
redis.register_function('device_zone', device_zone)
redis.register_function('session_claim', session_claim)
redis.register_function('credentials_revoke', credentials_revoke)
