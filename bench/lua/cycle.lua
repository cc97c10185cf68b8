-- SPDX-License-Identifier: Apache-2.0
-- bench/lua/cycle.lua: GET the static site's pages over and over.
--   wrk ... -s cycle.lua URL -- COUNT
-- Every thread walks all COUNT pages (/p/0000.html ...) in its own random
-- order, again and again, so every page (and every httpd process) keeps
-- seeing every URL.
local counter = 0
function setup(thread)
    thread:set("id", counter)
    counter = counter + 1
end

local reqs, n, pos = {}, 0, 0
function init(args)
    n = tonumber(args[1]) or 1000
    math.randomseed(1000 + (id or 0))
    for i = 1, n do
        reqs[i] = wrk.format("GET", string.format("/p/%04d.html", i - 1))
    end
    for i = n, 2, -1 do
        local j = math.random(i)
        reqs[i], reqs[j] = reqs[j], reqs[i]
    end
end

function request()
    pos = pos % n + 1
    return reqs[pos]
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
