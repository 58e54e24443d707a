-- wrk script: upstream's k6 session loop, for a cross-check by an independent generator.
-- Run with one connection per thread (-tN -cN): each thread is one virtual user that
-- runs, per iteration, a session per tool (initialize, notifications/initialized,
-- tools/call, DELETE when the server gave a session id), a session with tools/list,
-- then pauses THINK_MS. Counts as k6: initialize + tools/call + tools/list.
local threads = {}
local next_user = 0

function setup(thread)
  next_user = next_user + 1
  thread:set("user", next_user)
  table.insert(threads, thread)
end

local init_body = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":' ..
  '"2024-11-05","capabilities":{},"clientInfo":{"name":"wrk-bench","version":"1.0"}}}'
local notify_body = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
local think = tonumber(os.getenv("THINK_MS") or "50")
local calls, phase, step, sid, resting = {}, 0, 1, nil, false
mcp, errors, sessions = 0, 0, 0

function init(args)
  local uid = string.format("user-%05d", user % 1000)
  local call = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"%s","arguments":%s}}'
  calls = {
    string.format(call, "search_products",
      '{"category":"Electronics","min_price":50.0,"max_price":500.0,"limit":10}'),
    string.format(call, "get_user_cart", '{"user_id":"' .. uid .. '"}'),
    string.format(call, "checkout", '{"user_id":"' .. uid ..
      '","items":[{"product_id":42,"quantity":2},{"product_id":1337,"quantity":1}]}'),
    '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}',
  }
end

request = function()
  local headers = {["Content-Type"] = "application/json",
                   ["Accept"] = "application/json, text/event-stream"}
  if sid then headers["Mcp-Session-Id"] = sid end
  if phase == 0 then return wrk.format("POST", nil, headers, init_body) end
  if phase == 1 then return wrk.format("POST", nil, headers, notify_body) end
  if phase == 2 then return wrk.format("POST", nil, headers, calls[step]) end
  return wrk.format("DELETE", nil, {["Mcp-Session-Id"] = sid}, nil)
end

local function advance()
  phase, sid = 0, nil
  step = step % #calls + 1
  resting = step == 1
end

response = function(status, headers, body)
  if status < 200 or status > 299 then errors = errors + 1 end
  if phase == 0 then
    mcp = mcp + 1
    sid = headers["mcp-session-id"] or headers["Mcp-Session-Id"]
    phase = 1
  elseif phase == 1 then
    phase = 2
  elseif phase == 2 then
    mcp, sessions = mcp + 1, sessions + 1
    if string.find(body, '"isError":true', 1, true) or string.find(body, '"error":{', 1, true) then
      errors = errors + 1
    end
    if sid then phase = 3 else advance() end
  else
    advance()
  end
end

delay = function()
  if resting then
    resting = false
    return think
  end
  return 0
end

done = function(summary, latency, requests)
  local m, e, s = 0, 0, 0
  for _, thread in ipairs(threads) do
    m = m + thread:get("mcp")
    e = e + thread:get("errors")
    s = s + thread:get("sessions")
  end
  local x = summary.errors
  io.write(string.format(
    'RESULT {"mcp":%d,"sessions":%d,"errors":%d,"socket_errors":%d,"http":%d,"duration_us":%d,' ..
    '"p50_us":%d,"p99_us":%d}\n', m, s, e, x.connect + x.read + x.write + x.timeout,
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99)))
end
