-- SPDX-License-Identifier: Apache-2.0
-- bench/lua/fetch.lua: GET one path again and again (one connection:
-- the latency percentiles are request-to-last-byte times).
--   wrk ... -s fetch.lua URL -- PATH [gzip]
-- "gzip" sends Accept-Encoding: gzip, as crawlers do.
local req
function init(args)
    local headers = nil
    if args[2] == "gzip" then
        headers = { ["Accept-Encoding"] = "gzip" }
    end
    req = wrk.format("GET", args[1] or "/", headers)
end

function request()
    return req
end

function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format("BENCH requests=%d duration_us=%d bytes=%d " ..
        "connect=%d read=%d write=%d status=%d timeout=%d " ..
        "p50_us=%d p90_us=%d p99_us=%d\n", summary.requests,
        summary.duration, summary.bytes, e.connect, e.read, e.write,
        e.status, e.timeout, latency:percentile(50),
        latency:percentile(90), latency:percentile(99)))
end
