-- The public benchmark's iteration for wrk, an independent load generator to check
-- `mcp-actors bench --scenario public-benchmark.toml` against: on one connection,
-- POST initialize, POST notifications/initialized, POST one tools/call, DELETE the
-- session, over and over. Run one connection per thread (the state is per thread):
--
--   wrk -t 8 -c 8 -d 30s -s benchmarks/scenarios/public-benchmark.lua http://127.0.0.1:8765/mcp
--
-- wrk counts HTTP requests: iterations/s = Requests/sec / 4. Compare with the bench's
-- "iterations" row run with `users = 8` (and no ramp), e.g. a copy of the scenario file.
local step, session = 0, nil
local headers = {
  ["Accept"] = "application/json, text/event-stream",
  ["Content-Type"] = "application/json",
}
local bodies = {
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    .. '"capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}',
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}',
}

request = function()
  local h = {}
  for k, v in pairs(headers) do h[k] = v end
  if step > 0 then
    h["Mcp-Session-Id"] = session
    h["Mcp-Protocol-Version"] = "2025-11-25"
  end
  if step == 3 then
    return wrk.format("DELETE", nil, h, nil)
  end
  return wrk.format("POST", nil, h, bodies[step + 1])
end

response = function(status, hs, body)
  if step == 0 then
    session = hs["Mcp-Session-Id"] or hs["mcp-session-id"]
  end
  step = (step + 1) % 4
end
