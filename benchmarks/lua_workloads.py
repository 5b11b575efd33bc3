"""Lua workloads shared by lua_bench.py and lua_ab.py.

`QJSON_READS` defines, in a Lua chunk where `W` (the workload table) and
`qjson` are locals, the read workloads: path getters on a parsed Doc and
proxy reads of a decoded body, for the chat request and github-100k.
lua_bench.py times them against lua-cjson (and in its long-lived rows);
lua_ab.py runs the same functions for its A/B of two builds.
"""

QJSON_READS = r"""
W.qjson_chat = function(s)
    local d = qjson.parse(s)
    local m = d:get_str("model")
    local t = d:get_f64("temperature")
    local n = d:len("messages")
    for i = 0, n - 1 do
        local c = d:get("messages[" .. i .. "].content")
    end
    return d
end

W.qjson_proxy_chat = function(s)
    local d = qjson.decode(s)
    local m = d.model
    local t = d.temperature
    local msgs = d.messages
    local n = qjson.len(msgs)
    for i = 1, n do
        local c = msgs[i].content
    end
    return d
end

W.qjson_github = function(s)
    local d = qjson.parse(s)
    local n = d:len()
    for i = 0, n - 1 do
        local t = d:get_str("[" .. i .. "].title")
    end
    return d
end

W.qjson_proxy_github = function(s)
    local d = qjson.decode(s)
    for i = 1, qjson.len(d) do
        local t = d[i].title
    end
    return d
end
"""
