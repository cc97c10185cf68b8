-- SPDX-License-Identifier: Apache-2.0
-- bench/lua/crawl.lua: every request a URL never requested before.
--   wrk ... -s crawl.lua URL -- TAG
-- Paths are /crawl/TAG-THREAD-N.html (TAG unique per wrk run); the bench
-- httpd maps /crawl/ to one file with an internal rewrite.
local counter = 0
function setup(thread)
    thread:set("id", counter)
    counter = counter + 1
end

local tag, n = "x", 0
function init(args)
    tag = args[1] or "x"
end

function request()
    n = n + 1
    return wrk.format("GET", "/crawl/" .. tag .. "-" .. id .. "-" .. n ..
                      ".html")
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
