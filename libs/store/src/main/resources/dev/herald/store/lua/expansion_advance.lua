-- Saves an audience expander's progress and counts the targets it just queued, atomically, so a
-- resumed expansion neither skips nor double-counts a page.
-- KEYS[1] expand:<id>, KEYS[2] msg:<id>. ARGV[1] next cursor ('done' at the end), ARGV[2] next
-- batch number, ARGV[3] targets queued by this step, ARGV[4] TTL of the progress record (s).
redis.call('HSET', KEYS[1], 'cursor', ARGV[1], 'batch', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HINCRBY', KEYS[2], 'total', ARGV[3]) end
return 1
