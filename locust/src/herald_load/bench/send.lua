-- wrk script: sustained single-token sends to the Dispatcher, each to a distinct FCM token.
-- Needs HERALD_APP and HERALD_KEY in the environment.
local counter = 0
local app = os.getenv("HERALD_APP") or "bench"
local key = os.getenv("HERALD_KEY")
local path = "/v1/apps/" .. app .. "/messages"
local headers = {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. key}

function setup(thread)
  thread:set("prefix", tostring(math.random(1, 1000000000)))
end

request = function()
  counter = counter + 1
  local body = '{"to":{"tokens":[{"channel":"fcm","token":"accept-' .. prefix .. '-' .. counter .. '"}]},'
    .. '"title":"Hi","body":"Accept benchmark","priority":"high","ttl":600}'
  return wrk.format("POST", path, headers, body)
end

local statuses = {}
response = function(status)
  statuses[status] = (statuses[status] or 0) + 1
end

done = function(summary, latency, requests)
  io.write(string.format("  requests %d in %.1f s: %.0f requests/s\n", summary.requests,
    summary.duration / 1e6, summary.requests / (summary.duration / 1e6)))
  io.write(string.format("  latency p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  max %.2f ms\n",
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout + summary.errors.status
  io.write(string.format("  errors: socket/timeout %d, non-2xx %d\n", errors - summary.errors.status, summary.errors.status))
end
