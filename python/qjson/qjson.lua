--[[
qjson for LuaJIT: the Rust core's structural index and path reads through
LuaJIT's FFI, lazy table proxies, and a lua-cjson-compatible encoder.

    local qjson = require("qjson")
    local doc = qjson.parse(s [, {lazy = true, max_depth = n}])
    doc:get_str(p)  doc:get_i64(p)  doc:get_f64(p)  doc:get_bool(p)  doc:typeof(p)
    doc:len(p)  doc:raw(p)  doc:get(p)  doc:open(p) -> cursor with the same methods
    doc:get_all(p) -> array (wildcards [*] and .*)  doc:get_many({p1, ...}) -> array
    qjson.path(text) -> compiled path, accepted wherever a path is
    qjson.decode(s [, {max_depth = n}]) -> lazy proxy;  qjson.encode(v) -> string
    qjson.pairs / qjson.ipairs / qjson.len;  qjson.null;  qjson.materialize(v)
    qjson.insert(t, [pos,] v) / qjson.remove(t [, pos]) / qjson.append(t, v) on array proxies
    qjson.patch / merge_patch / incr / mul: the same bytes as Python for the same edits

Loading the library: inside Python, qjson.luajit.install(runtime) passes the
path of the extension module (`qjson._qjson.__file__`) as the chunk's second
argument, so Python and Lua share one loaded library. Standalone, the path
comes from $QJSON_LIB, else `libqjson` on package.cpath, else the system
search for `libqjson.so` (the `cargo build --no-default-features` build).

A missing path answers nil; any other error (a type mismatch, a malformed
path, invalid JSON) raises a Lua error whose message starts with "qjson: ".
]]

local ffi = require("ffi")
local buffer = require("string.buffer")
local table_new = require("table.new")
local table_clear = require("table.clear")

local _, lib_path = ...

local type, error, tostring, next, rawget, setmetatable, getmetatable =
    type, error, tostring, next, rawget, setmetatable, getmetatable
local floor, huge = math.floor, math.huge
local find, gsub, format = string.find, string.gsub, string.format
local ffi_string, ffi_new, ffi_gc, ffi_istype = ffi.string, ffi.new, ffi.gc, ffi.istype

-- Calls in return position are parenthesised where they are hot
-- (`return (f(x))`, not a tail call): LuaJIT counts every tail call of the
-- trace being recorded toward its loop-unroll limit (15), and a decode
-- followed by a few proxy reads made more than that, so the trace aborted
-- ("loop unroll limit reached") and the reads ran in the interpreter.

-- The declarations of include/qjson.h between QJSON_CDEF_BEGIN and
-- QJSON_CDEF_END (a test checks that they match, comments and whitespace
-- aside).
local CDEF = [[
typedef struct qjson_doc qjson_doc;
typedef struct qjson_options {
    int lazy;
    uint32_t max_depth;
} qjson_options;
typedef struct qjson_cursor {
    uint32_t start;
    uint32_t sidx;
    uint32_t ord;
    uint32_t type;
} qjson_cursor;
typedef struct qjson_iter {
    uint32_t opaque[6];
} qjson_iter;
int qjson_parse(const char *input, size_t len, const qjson_options *opts,
                qjson_doc **out);
void qjson_free(qjson_doc *doc);
int qjson_parse_root(const char *input, size_t len, const qjson_options *opts,
                     qjson_doc **out, qjson_cursor *root, size_t *memory);
size_t qjson_memory(const qjson_doc *doc);
int qjson_find(const qjson_doc *doc, const qjson_cursor *at,
               const char *path, size_t path_len, qjson_cursor *out);
int qjson_field(const qjson_doc *doc, const qjson_cursor *at,
                const char *key, size_t key_len, qjson_cursor *out);
int qjson_index(const qjson_doc *doc, const qjson_cursor *at, int64_t i,
                qjson_cursor *out);
typedef struct qjson_value {
    qjson_cursor at;
    const char *str;
    size_t len;
    double num;
} qjson_value;
int qjson_field_value(const qjson_doc *doc, const qjson_cursor *at,
                      const char *key, size_t key_len, qjson_value *out);
int qjson_index_value(const qjson_doc *doc, const qjson_cursor *at, int64_t i,
                      qjson_value *out);
int qjson_get_str(const qjson_doc *doc, const qjson_cursor *at,
                  const char *path, size_t path_len,
                  const char **out, size_t *out_len);
int qjson_get_i64(const qjson_doc *doc, const qjson_cursor *at,
                  const char *path, size_t path_len, int64_t *out);
int qjson_get_f64(const qjson_doc *doc, const qjson_cursor *at,
                  const char *path, size_t path_len, double *out);
int qjson_get_bool(const qjson_doc *doc, const qjson_cursor *at,
                   const char *path, size_t path_len, int *out);
int qjson_get_null(const qjson_doc *doc, const qjson_cursor *at,
                   const char *path, size_t path_len);
int qjson_typeof(const qjson_doc *doc, const qjson_cursor *at,
                 const char *path, size_t path_len, int *out);
int qjson_len(const qjson_doc *doc, const qjson_cursor *at,
              const char *path, size_t path_len, size_t *out);
int qjson_span(const qjson_doc *doc, const qjson_cursor *at,
               const char *path, size_t path_len,
               size_t *start, size_t *end);
int qjson_get_all(const qjson_doc *doc, const qjson_cursor *at,
                  const char *path, size_t path_len,
                  const qjson_cursor **out, size_t *n);
typedef struct qjson_path qjson_path;
int qjson_path_new(const char *text, size_t len, qjson_path **out);
void qjson_path_free(qjson_path *path);
int qjson_path_find(const qjson_doc *doc, const qjson_cursor *at,
                    const qjson_path *path, qjson_cursor *out);
int qjson_path_get_all(const qjson_doc *doc, const qjson_cursor *at,
                       const qjson_path *path,
                       const qjson_cursor **out, size_t *n);
int qjson_iter_init(const qjson_doc *doc, const qjson_cursor *at,
                    const char *path, size_t path_len, qjson_iter *it);
int qjson_iter_next(const qjson_doc *doc, qjson_iter *it,
                    const char **key, size_t *key_len, qjson_cursor *value);
const char *qjson_last_error(int *status, size_t *offset);
const char *qjson_version(void);
const char *qjson_backend(void);
typedef struct qjson_many qjson_many;
int qjson_many_new(const char *input, size_t len, const qjson_options *opts,
                   qjson_many **out);
int qjson_many_next(qjson_many *m, qjson_doc **out, uint64_t *index,
                    size_t *start);
void qjson_many_free(qjson_many *m);
int qjson_many_stream(const qjson_options *opts, size_t window, qjson_many **out);
int qjson_many_window(qjson_many *m, const char *input, size_t len, int at_end);
size_t qjson_many_consumed(const qjson_many *m);
size_t qjson_cjson_string(const char *s, size_t len, char *out);
size_t qjson_cjson_escape(const char *s, size_t len, char *out);
void qjson_copy(char *dst, const char *src, size_t len);
int qjson_compact(const char *input, size_t len, const char **out,
                  size_t *out_len);
typedef struct qjson_edit qjson_edit;
typedef struct qjson_seg {
    const char *p;
    size_t len;
    uint32_t kind;
    uint32_t id;
} qjson_seg;
int qjson_edit_new(const qjson_doc *doc, const qjson_cursor *at,
                   qjson_edit **out);
int qjson_member_span(const qjson_doc *doc, const qjson_cursor *at,
                      const char *key, size_t len, size_t *spans);
int qjson_edit_new_owned(const qjson_doc *doc, const qjson_cursor *at,
                         qjson_edit **out);
void qjson_edit_free(qjson_edit *e);
int qjson_edit_changed(const qjson_edit *e);
int qjson_edit_len(const qjson_doc *doc, qjson_edit *e, size_t *out);
int qjson_edit_set(const qjson_doc *doc, qjson_edit *e, const char *key,
                   size_t len, uint32_t id, int *added);
int qjson_edit_delete(const qjson_doc *doc, qjson_edit *e, const char *key,
                      size_t len);
int qjson_edit_slot(const qjson_doc *doc, qjson_edit *e, size_t i,
                    int64_t *out);
int qjson_edit_put(const qjson_doc *doc, qjson_edit *e, size_t i, uint32_t id);
int qjson_edit_insert(const qjson_doc *doc, qjson_edit *e, size_t i,
                      uint32_t id);
int qjson_edit_remove(const qjson_doc *doc, qjson_edit *e, size_t i);
int qjson_edit_plan(const qjson_doc *doc, qjson_edit *e,
                    const qjson_cursor *views, size_t nviews,
                    const qjson_seg **segs, size_t *nsegs);
int qjson_edit_save(qjson_edit *e);
int qjson_edit_restore(qjson_edit *e);
int qjson_edit_reset(qjson_edit *e);
]]

-- Declare once per Lua state (a second ffi.cdef of the structs would fail,
-- e.g. when install() runs twice on one runtime).
if not pcall(ffi.typeof, "qjson_seg") then
    ffi.cdef(CDEF)
end

local function load_library(path)
    if path and path ~= "" then
        return ffi.load(path)
    end
    local env = os.getenv("QJSON_LIB")
    if env and env ~= "" then
        return ffi.load(env)
    end
    local found = package.searchpath and package.searchpath("libqjson", package.cpath)
    if found then
        return ffi.load(found)
    end
    return ffi.load("qjson")
end

local C = load_library(lib_path)

-- Status and type codes (include/qjson.h).
local OK, END, NOT_FOUND = 0, 1, 2
local OBJECT, ARRAY, STRING, NUMBER, BOOL, NULL = 1, 2, 3, 4, 5, 6
local TYPE_NAMES = { "object", "array", "string", "number", "bool", "null" }

-- Out-parameters, allocated once per module so that traces stay
-- allocation-free.
local cur_out = ffi_new("qjson_cursor[1]")
local ptr_out = ffi_new("const char *[1]")
local len_out = ffi_new("size_t[2]")
local i64_out = ffi_new("int64_t[1]")
local f64_out = ffi_new("double[1]")
local int_out = ffi_new("int[1]")
local doc_out = ffi_new("qjson_doc *[1]")
local status_out = ffi_new("int[1]")
local offset_out = ffi_new("size_t[1]")
local cursor_t = ffi.typeof("qjson_cursor")
local iter_t = ffi.typeof("qjson_iter")
local int64_t = ffi.typeof("int64_t")
local uint64_t = ffi.typeof("uint64_t")
local charp_t = ffi.typeof("const char *")

local qjson = {
    _VERSION = ffi_string(C.qjson_version()),
    _BACKEND = ffi_string(C.qjson_backend()),
    lib = C,
}

--- The sentinel for JSON null in proxies and materialized tables (and
--- accepted by qjson.encode, as is lua-cjson's cjson.null).
local null = setmetatable({}, {
    __tostring = function()
        return "qjson.null"
    end,
    __newindex = function()
        error("qjson.null is read-only", 2)
    end,
})
qjson.null = null
-- The metatable marking a plain table as a JSON array when it is empty
-- (lua-cjson's `cjson.empty_array_mt`): encode writes such a table as "[]"
-- where an unmarked empty table is "{}". materialize and the patch
-- functions mark the empty arrays they copy out of proxies, so an emptied
-- array stays an array.
qjson.empty_array_mt = { __name = "qjson.empty_array" }

-- ---------------------------------------------------------------- errors

--- The last error of this thread: message, status, offset.
local function last_error()
    local m = C.qjson_last_error(status_out, offset_out)
    return ffi_string(m), status_out[0], tonumber(offset_out[0])
end

-- Undoes the edits of the JSON Patch or merge patch being applied, if one
-- is (set by the patch section): an error raised while its journal is open
-- must leave the target as it was, and a patch's first run has no pcall.
-- From raise() (`from_raise`) only in that first run: under a pcall the
-- pcall's handler undoes, and an error that user code raises and catches
-- itself (a metamethod calling qjson under pcall) must not undo the patch.
local journal_abort = function(_) end

--- Raise the error behind status `rc` (never NOT_FOUND: callers answer nil).
local function raise(rc, path, level)
    journal_abort(true)
    local msg = last_error()
    if path then
        msg = format("%s (path %q)", msg, path)
    end
    error("qjson: " .. msg, (level or 2) + 1)
end

-- ---------------------------------------------------------------- Doc / cursor

--[[ A Doc and its cursors share one set of methods. Fields:
    _h   the qjson_doc * (freed once no Doc, cursor or proxy holds it: see adopt)
    _s   the input string, pinned for the handle's lifetime
    _at  nil for the Doc (paths from the root), a qjson_cursor for a cursor
]]
local Doc = {}
Doc.__index = Doc
-- Compiled paths (qjson.path, below): every getter takes one. Each getter
-- tests for it first and hands it to by_path, so that every getter is a
-- function of its own. (A wrapper around the getters, one prototype shared
-- by all of them, made the first trace LuaJIT records in a getter loop a
-- function trace of that wrapper specialised to one getter: the others left
-- it by side exits whose side traces ran on into the caller's loops, and in
-- some states whole read loops then ran in the interpreter: 60 KB parse +
-- reads at 2x the instructions of a state that had traced them.)
local Path = {}
local by_path
Doc.__tostring = function(self)
    return self._at and "qjson.Cursor" or "qjson.Doc"
end

-- LuaJIT's collector does not see the index memory the handles hold (it
-- is Rust's), so a loop that parses and drops documents would let the
-- handles pile up until Lua's own allocations trigger a cycle. Pacing:
-- after a cycle ends, new index memory may reach `budget` before any GC
-- work is asked for; past it, every GC_STEP bytes of index memory run a GC
-- step of that size until the cycle ends. The budget adapts to what a cycle
-- costs in this state: cycles are cheap in a small heap (or one of strings),
-- and a small budget keeps the index memory reused while it is in cache;
-- they cost in proportion to the live tables of a big heap, and there a
-- fixed budget would make every parse pay for the whole heap (a state
-- holding 26 MB of live tables read 60 KB requests at a third of a fresh
-- state's rate when it stepped every 256 KB). So at each cycle's end the
-- time spent in the steps asked for is compared with the index memory that
-- the cycle served: over GC_NS nanoseconds a byte, the budget grows by that
-- excess (2x to 16x, up to GC_MAX); under a quarter of it, the budget halves
-- (down to GC_FLOOR). A cycle's end is seen by a sentinel: an unreachable
-- userdata whose finalizer does the above and leaves a new sentinel behind.
local GC_FLOOR, GC_MAX, GC_STEP, GC_NS = 256 * 1024, 64 * 1024 * 1024, 256 * 1024, 0.2
local native_new, budget, pending, gc_time, cycles = 0, GC_FLOOR, 0, 0, 0
local collectgarbage, newproxy, clock = collectgarbage, newproxy, os.clock

-- The handles themselves are not given ffi.gc finalisers: a finaliser per
-- document is a table insert at parse time and a call from the collector
-- per document freed, and a finaliser that runs while LuaJIT records a
-- trace aborts the recording ("error thrown or hook called during
-- recording"); with one per document, parse loops were aborted until
-- their traces were blacklisted and ran in the interpreter. Instead, a
-- registry: slot i holds the handle's address (reg_addr, strong), what it
-- borrows (reg_pin: the input string or window, strong) and the handle
-- cdata that every Doc, cursor and proxy of the document shares (reg_live,
-- a weak-valued table). The collector clears reg_live[i] in the cycle in
-- which the last holder became unreachable; the sentinel's finaliser,
-- which runs after that clearing, has those handles freed and the slots
-- compacted: one finaliser call per cycle, whatever the number of
-- documents. The sweep itself runs at the next adopt, not in the
-- finaliser: LuaJIT records no trace inside a finaliser, so a sweep there
-- ran in the interpreter (a cast and a C call per handle: a third of a
-- microsecond per 2 KB request, 7% of decode + reads), where at adopt it
-- is a compiled loop. While more than SWEEP_NOW bytes of index memory
-- (4 MB) were made since the last sweep, the finaliser sweeps at once, so an
-- idle state holds at most that much index memory of dropped documents.
-- At lua_close, `reg_anchor`'s ffi.gc finaliser (run after the userdata
-- finalisers) frees every handle left. The anchor is an upvalue of
-- new_cursor and new_proxy, so it lives as long as any holder can.
local reg_addr, reg_pin, reg_live, reg_n = {}, {}, setmetatable({}, { __mode = "v" }), 0
local doc_ptr_t = ffi.typeof("qjson_doc *")
local intptr_t = ffi.typeof("intptr_t")
local qjson_free = C.qjson_free

--- Free the handles no longer held (all of them when `all`).
local function sweep(all)
    local j = 0
    for i = 1, reg_n do
        local live = reg_live[i]
        if live == nil or all then
            qjson_free(ffi.cast(doc_ptr_t, reg_addr[i]))
        else
            j = j + 1
            reg_addr[j], reg_pin[j], reg_live[j] = reg_addr[i], reg_pin[i], live
        end
    end
    for i = j + 1, reg_n do
        reg_addr[i], reg_pin[i], reg_live[i] = nil, nil, nil
    end
    reg_n = j
end
local reg_anchor = ffi_gc(ffi_new("char[1]"), function()
    sweep(true)
end)

local sweep_due, native_unswept = false, 0

local function cycle_ended(sentinel)
    if native_unswept >= 4 * 1024 * 1024 then -- SWEEP_NOW
        sweep(false)
        sweep_due, native_unswept = false, 0
    else
        sweep_due = true
    end
    if native_new > budget then
        local ns = gc_time * 1e9 / native_new
        if ns > GC_NS then
            -- Grow by the excess (2x to 16x): a big heap is reached in a
            -- few cycles rather than one doubling each.
            local f = ns / GC_NS
            f = f < 2 and 2 or f > 16 and 16 or f
            budget = budget * f < GC_MAX and budget * f or GC_MAX
        elseif ns < GC_NS / 4 then
            budget = budget / 2 > GC_FLOOR and budget / 2 or GC_FLOOR
        end
    end
    native_new, pending, gc_time, cycles = 0, 0, 0, cycles + 1
    newproxy(sentinel) -- the next sentinel (same metatable), unreachable
end
getmetatable(newproxy(true)).__gc = cycle_ended

--- Take ownership of a new handle that borrows `pin`: registered (freed
--- once no holder is left, see above) and counted for pacing.
--- `mem`: the handle's heap bytes when the caller has them (qjson_memory).
local function adopt(h, pin, mem)
    -- The address first, and the slot filled before it is counted: the
    -- cast can step the collector, and a cycle that ends there may sweep at
    -- once (see cycle_ended). A sweep that found the slot counted and still
    -- empty compacted the registry below it, and the handle, stored above
    -- its end, leaked. (Should a sweep run during the stores, it leaves the
    -- uncounted slot alone; slots it emptied below are nil, freed as NULL.)
    local addr = tonumber(ffi.cast(intptr_t, h))
    local n = reg_n + 1
    reg_addr[n], reg_pin[n], reg_live[n] = addr, pin, h
    reg_n = n
    if sweep_due then
        sweep_due, native_unswept = false, 0
        sweep(false)
    end
    local m = tonumber(mem or C.qjson_memory(h)) + 256
    native_unswept = native_unswept + m
    native_new = native_new + m
    if native_new > budget then
        pending = pending + m
        if pending >= GC_STEP and collectgarbage("isrunning") then
            local kb, c, t0 = floor(pending / 1024), cycles, clock()
            pending = 0
            collectgarbage("step", kb)
            if cycles == c then
                gc_time = gc_time + (clock() - t0)
            end
        end
    end
    return h
end

local function new_cursor(self, cp)
    local _ = reg_anchor -- keeps the registry's anchor alive (see above)
    return (setmetatable({ _h = self._h, _s = self._s, _at = cursor_t(cp[0]) }, Doc))
end

-- The options each function takes (OPTIONS.read's `allowed`).
-- (A table, not locals: the main chunk is at LuaJIT's limit of 200 locals.)
local OPTIONS = {
    parse = { lazy = true, max_depth = true },
    decode = { max_depth = true },
    buf = ffi_new("qjson_options"), -- the one parse and decode fill
}

--- The options table of parse / decode / parse_many / open_many, checked as
--- Python checks its keywords: a key that is not in `allowed` (the
--- function's option names -> true) or a value of the wrong type raises,
--- naming the function, at the level `level` of the function's caller;
--- nothing is ignored. lazy is a boolean, max_depth an integer from 1 to
--- 2^32 - 1 (the C ABI reads 0 as "the default"). Fills `o` (a
--- qjson_options) and returns it; nil when `opts` is nil.
function OPTIONS.read(name, opts, allowed, o, level)
    if opts == nil then
        return nil
    end
    if type(opts) ~= "table" then
        error(format("%s: options must be a table, got %s", name, type(opts)), level + 1)
    end
    for k in pairs(opts) do
        if not allowed[k] then
            local hint = ""
            if k == "lazy" then
                hint = " (decode validates the whole input, as cjson.decode and"
                    .. " Python's qjson.decode do; qjson.parse(s, {lazy = true}) reads lazily)"
            end
            error(format("%s: unknown option %s%s", name,
                type(k) == "string" and format("%q", k) or tostring(k), hint), level + 1)
        end
    end
    local lazy = opts.lazy
    if lazy ~= nil and type(lazy) ~= "boolean" then
        error(format("%s: lazy must be a boolean, got %s", name, type(lazy)), level + 1)
    end
    o.lazy = lazy and 1 or 0
    local d = opts.max_depth
    if d == nil then
        d = 0
    elseif type(d) ~= "number" or d < 1 or d > 0xffffffff or d ~= floor(d) then
        error(name .. ": max_depth must be a positive integer", level + 1)
    end
    o.max_depth = d
    return o
end


--- qjson.parse(s [, {lazy = bool, max_depth = n}]) -> Doc
function qjson.parse(s, opts)
    if type(s) ~= "string" then
        error("qjson.parse: expected a string, got " .. type(s), 2)
    end
    local o = nil
    if opts ~= nil then
        o = OPTIONS.read("qjson.parse", opts, OPTIONS.parse, OPTIONS.buf, 2)
    end
    -- qjson_parse_root: the handle and its heap size in one call (the root
    -- cursor it also gives is not kept: a Doc reads from a null cursor).
    local rc = C.qjson_parse_root(s, #s, o, doc_out, cur_out, len_out)
    if rc ~= OK then
        raise(rc, nil, 2)
    end
    return (setmetatable({ _h = adopt(doc_out[0], s, len_out[0]), _s = s }, Doc))
end

function Doc:get_str(p)
    if getmetatable(p) == Path then
        return by_path(self, p, "get_str")
    end
    p = p or ""
    local rc = C.qjson_get_str(self._h, self._at, p, #p, ptr_out, len_out)
    if rc == OK then
        return (ffi_string(ptr_out[0], len_out[0]))
    elseif rc == NOT_FOUND then
        return nil
    end
    raise(rc, p)
end

--- The integer at p as an int64_t cdata (lossless).
function Doc:get_i64(p)
    if getmetatable(p) == Path then
        return by_path(self, p, "get_i64")
    end
    p = p or ""
    local rc = C.qjson_get_i64(self._h, self._at, p, #p, i64_out)
    if rc == OK then
        return i64_out[0]
    elseif rc == NOT_FOUND then
        return nil
    end
    raise(rc, p)
end

function Doc:get_f64(p)
    if getmetatable(p) == Path then
        return by_path(self, p, "get_f64")
    end
    p = p or ""
    local rc = C.qjson_get_f64(self._h, self._at, p, #p, f64_out)
    if rc == OK then
        return f64_out[0]
    elseif rc == NOT_FOUND then
        return nil
    end
    raise(rc, p)
end

function Doc:get_bool(p)
    if getmetatable(p) == Path then
        return by_path(self, p, "get_bool")
    end
    p = p or ""
    local rc = C.qjson_get_bool(self._h, self._at, p, #p, int_out)
    if rc == OK then
        return int_out[0] ~= 0
    elseif rc == NOT_FOUND then
        return nil
    end
    raise(rc, p)
end

--- "object", "array", "string", "number", "bool" or "null".
function Doc:typeof(p)
    if getmetatable(p) == Path then
        return by_path(self, p, "typeof")
    end
    p = p or ""
    local rc = C.qjson_typeof(self._h, self._at, p, #p, int_out)
    if rc == OK then
        return TYPE_NAMES[int_out[0]]
    elseif rc == NOT_FOUND then
        return nil
    end
    raise(rc, p)
end

function Doc:len(p)
    if getmetatable(p) == Path then
        return by_path(self, p, "len")
    end
    p = p or ""
    local rc = C.qjson_len(self._h, self._at, p, #p, len_out)
    if rc == OK then
        return (tonumber(len_out[0]))
    elseif rc == NOT_FOUND then
        return nil
    end
    raise(rc, p)
end

--- The original text of the value at p.
function Doc:raw(p)
    if getmetatable(p) == Path then
        return by_path(self, p, "raw")
    end
    p = p or ""
    local rc = C.qjson_span(self._h, self._at, p, #p, len_out, len_out + 1)
    if rc == OK then
        local a, b = len_out[0], len_out[1]
        return (ffi_string(ffi.cast(charp_t, self._s) + a, b - a))
    elseif rc == NOT_FOUND then
        return nil
    end
    raise(rc, p)
end

--- A cursor on the value at p: the same methods, paths relative to it.
function Doc:open(p)
    if getmetatable(p) == Path then
        return by_path(self, p, "open")
    end
    p = p or ""
    local rc = C.qjson_find(self._h, self._at, p, #p, cur_out)
    if rc == OK then
        return (new_cursor(self, cur_out))
    elseif rc == NOT_FOUND then
        return nil
    end
    raise(rc, p)
end

--- The scalar at `cp` (a qjson_cursor *) as a Lua value (numbers as
--- doubles, null as qjson.null); nil for containers.
local function scalar(h, cp, t)
    local rc
    if t == STRING then
        rc = C.qjson_get_str(h, cp, "", 0, ptr_out, len_out)
        if rc == OK then
            return (ffi_string(ptr_out[0], len_out[0]))
        end
    elseif t == NUMBER then
        rc = C.qjson_get_f64(h, cp, "", 0, f64_out)
        if rc == OK then
            return f64_out[0]
        end
    elseif t == BOOL then
        rc = C.qjson_get_bool(h, cp, "", 0, int_out)
        if rc == OK then
            return int_out[0] ~= 0
        end
    elseif t == NULL then
        -- Checked: a lazy document's `nulll` has the type code of null.
        rc = C.qjson_get_null(h, cp, "", 0)
        if rc == OK then
            return null
        end
    else
        return nil
    end
    raise(rc, nil, 3)
end

--- The value at p: a string, number (double), boolean or qjson.null, or a
--- cursor for an object or array; nil when the path names nothing.
function Doc:get(p)
    if getmetatable(p) == Path then
        return by_path(self, p, "get")
    end
    p = p or ""
    local rc = C.qjson_find(self._h, self._at, p, #p, cur_out)
    if rc == OK then
        local t = cur_out[0].type
        if t == OBJECT or t == ARRAY then
            return (new_cursor(self, cur_out))
        end
        return (scalar(self._h, cur_out, t))
    elseif rc == NOT_FOUND then
        return nil
    end
    raise(rc, p)
end

-- ---------------------------------------------------------------- compiled paths, batch reads

--[[ qjson.path(text) parses a path once (a table holding the compiled
qjson_path *, freed by ffi.gc); every Doc / cursor method that takes a path
accepts one. doc:get_all(p) -> array of every value p matches (wildcards
`[*]` and `.*`), in document order, each as doc:get returns it;
doc:get_many({p1, p2, ...}) -> one value per path, qjson.null where a path
names nothing. ]]

-- A block, as the patches section: what it adds is in Doc and qjson.
do

    Path.__index = Path
    Path.__tostring = function(self)
        return self.text
    end
    local path_out = ffi_new("qjson_path *[1]")
    local path_cur = ffi_new("qjson_cursor[1]")
    local matches_out = ffi_new("const qjson_cursor *[1]")
    local count_out = ffi_new("size_t[1]")

    --- qjson.path(text) -> a compiled path (raises on a malformed one).
    function qjson.path(text)
        if type(text) ~= "string" then
            error("qjson.path: expected a string, got " .. type(text), 2)
        end
        local rc = C.qjson_path_new(text, #text, path_out)
        if rc ~= OK then
            raise(rc, text, 2)
        end
        return setmetatable({ text = text, _c = ffi_gc(path_out[0], C.qjson_path_free) }, Path)
    end

    --- The value at cursor `cp` as doc:get returns it.
    local function value_at(self, cp)
        local t = cp[0].type
        if t == OBJECT or t == ARRAY then
            return (new_cursor(self, cp))
        end
        return (scalar(self._h, cp, t))
    end

    --- Every value p (a string or qjson.path) matches, in document order.
    function Doc:get_all(p)
        local rc
        if getmetatable(p) == Path then
            rc = C.qjson_path_get_all(self._h, self._at, p._c, matches_out, count_out)
        else
            p = p or ""
            rc = C.qjson_get_all(self._h, self._at, p, #p, matches_out, count_out)
        end
        if rc ~= OK then
            raise(rc, tostring(p))
        end
        local m, n = matches_out[0], tonumber(count_out[0])
        local out = {}
        for i = 1, n do
            out[i] = value_at(self, m + (i - 1))
        end
        return out
    end

    --- One value per path of the array `paths`; qjson.null where a path names
    --- nothing.
    function Doc:get_many(paths)
        if type(paths) ~= "table" or getmetatable(paths) == Path then
            error("qjson: get_many expects an array of paths", 2)
        end
        local out = {}
        for i = 1, #paths do
            local v = self:get(paths[i])
            if v == nil then
                v = null
            end
            out[i] = v
        end
        return out
    end

    -- The getters by a compiled path: resolve it to a cursor, then read there.
    -- Each reader returns the value, or nil and a failing status.
    local function read_at(getter, out, convert)
        return function(self, cp)
            local rc = getter(self._h, cp, "", 0, out)
            if rc == OK then
                return (convert(out))
            end
            return nil, rc
        end
    end
    local AT = {
        get_str = function(self, cp)
            local rc = C.qjson_get_str(self._h, cp, "", 0, ptr_out, len_out)
            if rc == OK then
                return (ffi_string(ptr_out[0], len_out[0]))
            end
            return nil, rc
        end,
        get_i64 = read_at(C.qjson_get_i64, i64_out, function(o) return o[0] end),
        get_f64 = read_at(C.qjson_get_f64, f64_out, function(o) return o[0] end),
        get_bool = read_at(C.qjson_get_bool, int_out, function(o) return o[0] ~= 0 end),
        len = read_at(C.qjson_len, len_out, function(o) return tonumber(o[0]) end),
        typeof = function(_, cp)
            return TYPE_NAMES[cp[0].type]
        end,
        raw = function(self, cp)
            local rc = C.qjson_span(self._h, cp, "", 0, len_out, len_out + 1)
            if rc == OK then
                local a, b = len_out[0], len_out[1]
                return (ffi_string(ffi.cast(charp_t, self._s) + a, b - a))
            end
            return nil, rc
        end,
        open = new_cursor,
        get = value_at,
    }
    --- Getter `name` by the compiled path p (the getters' first test sends
    --- them here; a tail call, so errors name the getter's caller).
    by_path = function(self, p, name)
        local rc = C.qjson_path_find(self._h, self._at, p._c, path_cur)
        if rc == OK then
            local v, failed = AT[name](self, path_cur)
            if failed == nil then
                return v
            end
            rc = failed
        end
        if rc == NOT_FOUND then
            return nil
        end
        raise(rc, p.text)
    end
end

-- ---------------------------------------------------------------- encode (plain values)

--[[ Plain tables as lua-cjson 2.1.0 writes them, into one string.buffer.

The walk is iterative, with an explicit stack of frames instead of
recursion: per depth d, `stack[d]` is the table (also what cycle detection
scans), `fr_n[d]` its array length or -1 for an object, and `fr_at[d]` the
position to resume from (the last index written, or the last key). The loop
over a table's elements writes scalars in place; a nested table saves the
position and opens a frame above. LuaJIT compiles these loops into traces;
recursive calls would stop the trace recorder (a trace cannot return below
the frame it started in), leaving the encoder in the interpreter.

Strings are escaped by the library: qjson_cjson_string writes the quoted,
escaped literal straight into room reserved in the buffer (one FFI call per
string; Lua patterns are not compiled by LuaJIT). Object keys are written
from a bounded cache of their text ('"key":' and ',"key":').
]]

local cjson_string, cjson_escape = C.qjson_cjson_string, C.qjson_cjson_escape

-- Strings up to this length are written with one call (reserving six
-- bytes per byte, the longest escape); longer ones in pieces of this size.
local STR_CHUNK = 64 * 1024

local function put_long_string(b, s, n)
    b:put('"')
    local p = ffi.cast(charp_t, s)
    local off = 0
    while off < n do
        local m = n - off
        if m > STR_CHUNK then
            m = STR_CHUNK
        end
        b:commit(cjson_escape(p + off, m, (b:reserve(m * 6))))
        off = off + m
    end
    b:put('"')
end

-- cjson's escapes: '"', '\', '/', and control characters (0-31 and 127);
-- bytes >= 0x80 pass through.
local function put_string(b, s)
    local n = #s
    if n <= STR_CHUNK then
        b:commit(cjson_string(s, n, (b:reserve(n * 6 + 2))))
    else
        put_long_string(b, s, n)
    end
end

-- While set, numbers are written with 17 significant digits, enough to
-- read back the same double: own() encodes an edited proxy this way before
-- qjson_compact rewrites the text in its shortest form (%.14g would round
-- 1000000000000001 to 1e+15 in a copied value).
local exact_numbers = false

-- Numbers as lua-cjson writes them (%.14g), except that integers of up to
-- 15 digits are written exactly (%d).
local function put_number(b, n)
    if n ~= n or n == huge or n == -huge then
        error("Cannot serialise number: must not be NaN or Inf", 0)
    end
    if exact_numbers then
        b:putf("%.17g", n)
    elseif (n >= 1e14 or n <= -1e14) and n < 1e15 and n > -1e15 and floor(n) == n then
        b:putf("%d", n)
    else
        b:put(n)
    end
end

local encode_value -- (b, v, depth, stack)
local put_table -- (b, t, depth, stack)
local put_proxy -- (b, t, st, depth, stack)
local era = 0 -- counts qjson.encode calls (see "encode (proxies)")

local MAX_DEPTH = 1000

local function too_deep(t, depth, stack)
    for i = 1, depth - 1 do
        if stack[i] == t then
            error("Cannot serialise table: cycle detected", 0)
        end
    end
    error(format("Cannot serialise, excessive nesting (%d)", depth), 0)
end

-- The key cache: the text of a key as the first member ('"key":') and as
-- any other (',"key":'), for keys up to 128 bytes; emptied when it holds
-- 2048 keys. (Literals in new_key, not locals: the main chunk is at
-- LuaJIT's limit of 200.)
local key_first, key_next, n_keys = {}, {}, 0
local key_buf = buffer.new()

--- The text of key `k` as a member after the first (',"key":'), cached.
local function new_key(k)
    local kt = type(k)
    key_buf:reset()
    key_buf:put(",")
    if kt == "string" then
        put_string(key_buf, k)
    elseif kt == "number" then
        key_buf:put('"')
        put_number(key_buf, k)
        key_buf:put('"')
    else
        error("Cannot serialise " .. kt .. ": table key must be a number or string", 0)
    end
    key_buf:put(":")
    local s = key_buf:tostring()
    if kt ~= "string" or #k <= 128 then
        if n_keys >= 2048 then
            key_first, key_next, n_keys = {}, {}, 0
        end
        key_next[k] = s
        key_first[k] = s:sub(2)
        n_keys = n_keys + 1
    end
    return s
end

--- Write scalar `v`; false (nothing written) for a table other than null.
local function put_scalar(b, v)
    local vt = type(v)
    if vt == "string" then
        put_string(b, v)
    elseif vt == "number" then
        put_number(b, v)
    elseif vt == "table" then
        if v ~= null then
            return false
        end
        b:put("null")
    elseif vt == "boolean" then
        b:put(v and "true" or "false")
    elseif vt == "nil" then
        b:put("null")
    elseif vt == "cdata" and (ffi_istype(int64_t, v) or ffi_istype(uint64_t, v)) then
        b:put((gsub(tostring(v), "U?LL$", "")))
    elseif (vt == "userdata" or vt == "cdata") and ffi.cast("void *", v) == nil then
        b:put("null") -- cjson.null (a NULL lightuserdata) or a NULL pointer
    else
        error("Cannot serialise " .. vt .. ": type not supported", 0)
    end
    return true
end

-- A value put by a patch, kept with its text (see own() and plan_new in
-- "patches"): a record {c = a copy of a plain value, text = c as encode
-- writes it, n = c's member count, ks = c's keys in insertion order (an
-- object's), mt = c's metatable or false}, or {c = an
-- untouched proxy of a merge patch text, text = its bytes, proxy = true},
-- whose metatable is RAW. encode writes the text; a read of the value hands
-- out a value of its own in the record's place (RAW.copy: a copy of c, or a
-- fresh proxy of c's bytes as own() makes), so the record itself never
-- reaches user code and stays shared by the documents it was put into.
local RAW = { __name = "qjson.raw" }

--- The value of record `rec` as a plain table of its own (a read puts it
--- in the record's place).
function RAW.copy(rec)
    local c = rec.c
    if rec.proxy then
        return (RAW.own(c))
    end
    local t, ks = table_new(#c, 4), rec.ks
    if ks then
        -- c's keys in the order that built c: the same inserts give the
        -- same table, which iterates (and so encodes) as c did.
        for i = 1, #ks do
            local k = ks[i]
            t[k] = c[k]
        end
    else
        for i = 1, rec.n do
            t[i] = c[i]
        end
    end
    if rec.mt then
        setmetatable(t, rec.mt)
    end
    return t
end

-- Frames of the walk, by depth (see the top of this section).
local fr_n, fr_at = {}, {}

--- Open table `t` as frame `d`: write "[" or "{" and record the frame.
--- Returns whether the frame has elements to walk; false when `t` was
--- written whole (a proxy, or an empty table: "{}").
local function open_table(b, t, d, stack)
    if d > MAX_DEPTH then
        too_deep(t, d, stack)
    end
    stack[d] = t
    local st = getmetatable(t)
    if st ~= nil and type(st) == "table" and rawget(st, "__qjson") then
        put_proxy(b, t, st, d, stack)
        stack[d] = nil
        return false
    elseif st == RAW then
        -- A value put by a patch, as the text of its record (only a
        -- proxy's values hold records: see RAW).
        b:put(t.text)
        stack[d] = nil
        return false
    end
    -- cjson's rule: an array when every key is a positive integer, unless
    -- it is excessively sparse (more than half holes past index 10). A
    -- first key that is not a number settles it without the count.
    local k1 = next(t)
    if type(k1) == "string" then
        b:put("{")
        fr_n[d], fr_at[d] = -1, nil
        return true
    end
    local max, items = 0, 0
    for k in next, t do
        if type(k) == "number" and k > 0 and floor(k) == k then
            if k > max then
                -- cjson keeps `max` in a C int: a key of 2^31 or more
                -- becomes INT_MIN there (x86-64), and so here.
                max = k < 2147483648 and k or -2147483648
            end
            items = items + 1
        else
            max = -1
            break
        end
    end
    if max ~= -1 and max > items * 2 and max > 10 then
        error("Cannot serialise table: excessively sparse array", 0)
    end
    if max > 0 then
        b:put("[")
        fr_n[d], fr_at[d] = max, 0
        return true
    elseif max == 0 then
        b:put(st ~= nil and st == qjson.empty_array_mt and "[]" or "{}")
        stack[d] = nil
        return false
    end
    b:put("{")
    fr_n[d], fr_at[d] = -1, nil
    return true
end

--- Write table `t` (plain or proxy) as the value at depth + 1, and all
--- that is below it.
put_table = function(b, t, depth, stack)
    local d = depth + 1
    if not open_table(b, t, d, stack) then
        return
    end
    while true do
        local child = nil
        t = stack[d]
        local n = fr_n[d]
        if n >= 0 then
            local i = fr_at[d]
            while i < n do
                i = i + 1
                if i > 1 then
                    b:put(",")
                end
                local v = rawget(t, i)
                if not put_scalar(b, v) then
                    child = v
                    break
                end
            end
            if child == nil then
                b:put("]")
            else
                fr_at[d] = i
            end
        else
            local k = fr_at[d]
            if k == nil then
                local first = true
                for key, v in next, t do
                    if first then
                        first = false
                        local s = key_first[key]
                        if s == nil then
                            s = new_key(key):sub(2)
                        end
                        b:put(s)
                    else
                        b:put(key_next[key] or new_key(key))
                    end
                    if not put_scalar(b, v) then
                        child, k = v, key
                        break
                    end
                end
            else
                local v
                k, v = next(t, k)
                while k ~= nil do
                    b:put(key_next[k] or new_key(k))
                    if not put_scalar(b, v) then
                        child = v
                        break
                    end
                    k, v = next(t, k)
                end
            end
            if child == nil then
                b:put("}")
            else
                fr_at[d] = k
            end
        end
        if child ~= nil then
            d = d + 1
            if not open_table(b, child, d, stack) then
                d = d - 1
            end
        else
            -- The frame is closed: its entries are dropped (see qjson.encode).
            stack[d], fr_at[d] = nil, nil
            d = d - 1
            if d == depth then
                return
            end
        end
    end
end

encode_value = function(b, v, depth, stack)
    if not put_scalar(b, v) then
        put_table(b, v, depth, stack)
    end
end

local out = buffer.new()
local stack = {}
local LIGHT = {} -- light edits: LIGHT.set, LIGHT.encode (see "light edits")
local walking = false -- a walk of qjson.encode has begun and not ended
-- The encode buffer is kept between calls up to this size: a buffer grown
-- anew for each large result (a doubling chain of reallocations, each
-- fresh mapping page-faulted) cost 20x a copy at 5-10 MB.
--
-- What an edited result costs, beyond the decode: two passes over its
-- bytes, which no reordering here removes (LuaJIT makes a string only from
-- contiguous bytes, by copying them): the plan's spans into this buffer,
-- then the buffer into a string (a compare of the bytes instead, when an
-- equal string is alive, as in a benchmark that makes the same edit each
-- time). An untouched proxy costs neither (its input is the result). So
-- an edit of a large body is at least decode + 2 copies against the
-- passthrough's decode: in one run, 100 KB 2.1 + 1.8 + 1.9 us, 1 MB
-- 19 + 24 + 22 us, 10 MB 0.18 + 0.46 + 0.4 ms. And a result that is new
-- (in a gateway, every one) from 128 KB up is a fresh mapping of LuaJIT's
-- allocator whose pages the kernel faults in: 0.64 ms at 1 MB, 6.2 ms at
-- 10 MB, more than the copies (lua_ab.py's fresh workload).
local KEEP_MAX = 64 * 1024 * 1024

--- qjson.encode(v) -> string. Plain tables as lua-cjson encodes them;
--- proxies from qjson.decode as their original bytes, with edits spliced in.
function qjson.encode(v)
    -- An untouched root proxy is its input text: no copy at all when the
    -- input has no surrounding whitespace.
    local pst = nil
    if type(v) == "table" then
        local st = getmetatable(v)
        if type(st) == "table" and rawget(st, "__qjson") then
            if not st.dirty then
                if st.whole == st then
                    return st.s
                end
                local rc = C.qjson_span(st.h, st.cur, "", 0, len_out, len_out + 1)
                if rc ~= OK then
                    raise(rc)
                end
                local a, e = len_out[0], len_out[1]
                return (ffi_string(ffi.cast(charp_t, st.s) + a, e - a))
            end
            if rawget(st, "e") == nil and not st.kids then -- a light edit alone
                return LIGHT.encode(st)
            end
            pst = st
        end
    end
    era = era + 1
    -- No pcall around the walk: returning through a pcall frame is not
    -- compiled by LuaJIT (a trace ending in the walk could not return here,
    -- and every call would finish in the interpreter). After an error, the
    -- buffer is reset by the next call and the frames are cleared by the
    -- next call that succeeds.
    out:reset()
    if walking then
        -- The previous walk failed half-way: drop the frames it left.
        for i = #stack, 1, -1 do
            stack[i], fr_at[i] = nil, nil
        end
    end
    walking = true
    if pst ~= nil then
        -- An edited proxy: straight to its plan (what put_table would
        -- reach through open_table, without the generic walk's calls).
        stack[1] = v
        put_proxy(out, v, pst, 1, stack)
    else
        encode_value(out, v, 0, stack)
    end
    -- Frames drop their entries as they close, so after a walk that
    -- finished only stack[1] (an edited proxy's) is left (a loop over the
    -- frames on every call, one or two of them, aborted the trace recording
    -- encode: "loop unroll limit reached").
    stack[1], fr_at[1] = nil, nil
    walking = false
    local s = out:tostring()
    if #out > KEEP_MAX then
        out:free()
    else
        out:reset()
    end
    return s
end

-- ---------------------------------------------------------------- lazy proxies

--[[ A proxy is an empty table whose metatable, `st`, is its own state:
    __qjson  OBJECT or ARRAY
    h, s     the document handle and the pinned input
    cur      the qjson_cursor of the container
    whole    (of the document, in dm) the state of the proxy that is the whole
             document (written clean: the whole input); `st.whole == st`
    parent   the state of the proxy it was read from (edits mark it dirty)
    cache    key (objects) or 0-based original ordinal (arrays) -> container
             proxy read (the same proxy on each read; scalars are not kept:
             see obj_index)
    dirty    an edit happened in this proxy or below (a hint: encode works
             out whether edits remain, see is_dirty)
    e        once edited, the address (a Lua number) of the core's edit
             state (src/capi/edit.rs, owned by the document), which
             names the values set by ids into `vals` (id -> value; a nil
             value is written as null)
  objects:   ks = {key -> the state of an edited key: id > 0, it replaces
             the original member with vals[id]; -id, it is added with
             vals[id]; 0, the original member is deleted},
             added = {added keys, in order}
  arrays:    n = the length once edited
    kids     the child proxies that became dirty, in the order they did
             (each once: encode asks them instead of walking the cache)
The core keeps the edits as the Python views do, and plans the writing of
an edited container (qjson_edit_plan): byte ranges of the input (untouched
members in runs, keys and whitespace as written), a few literal bytes, and
the values set, which this side encodes. So the same edits give the same
bytes as in Python, values set aside (lua-cjson's encoder writes them).
Values read from proxies: strings, numbers (doubles), booleans, qjson.null,
and proxies for containers (the same proxy each time).
]]

local new_proxy -- (h, s, cp, parent, root) -> proxy

-- The root proxy's state is a table of 16 slots, not 32 (about 450 bytes of
-- Lua heap, not 830: on the 2 KB request's reads, five proxies, the
-- collector took 40-45% of the time); a child object's, of 8 (see
-- new_proxy); a child array's, of 16, holding every field from the start
-- (its first edit, or its first encode as a dirty child, would otherwise
-- rehash it from 8 to 16 slots, and traces recorded on the small shape
-- exit on the big one: Lua patch 2k -6% Ir, proxy reads +3%). The
-- document's fields (`h`, `s`) are in one table per document, `dm`, which is
-- every state's metatable and its own __index, and so is `whole` (the root
-- proxy's state: a root flag of the state's own was a 16th key, and the
-- root's first added key or patch then rehashed it to 32 slots); fields a
-- state does not hold yet (`added`, `ks` for arrays; a child object's edit
-- and encode fields) are read from ST_DEFAULTS, dm's __index, until they
-- are set. The cache of children read is the shared NO_CACHE until the first
-- child is read. __len / __pairs / __ipairs are set only where LuaJIT
-- honours them on tables (built with LUA52COMPAT).
local st_meta = { __index = { -- ST_DEFAULTS
    whole = false, dirty = false, era = false, dirty_now = false,
    writing = false, e = false, vals = false, next_id = 0, ks = false, added = false,
    kids = false } }
local NO_CACHE = {} -- never written (own_cache replaces it first)
local LUA52 = #setmetatable({}, { __len = function() return 1 end }) == 1

--- The table of document fields that the proxies of handle `h` (over the
--- input `s`) share (see above).
local function doc_meta(h, s)
    local dm = setmetatable({ h = h, s = s, __index = false }, st_meta)
    dm.__index = dm
    return dm
end

--- The cache of children of proxy state `st`, made on the first child read,
--- with room for 4 keys: grown from empty, the root's cache on the 2 KB
--- request's reads (3 keys) was rehashed three times (callgrind, 2 KB
--- decode + reads: 25.9k instructions per op with `{}`, 24.0k with room for
--- 4, 24.3k for 2, 24.7k for 8).
local function own_cache(st)
    local cache = st.cache
    if cache == NO_CACHE then
        cache = table_new(0, 4)
        st.cache = cache
    end
    return cache
end

local edit_pt = ffi.typeof("qjson_edit *")
local slot_out = ffi_new("int64_t[1]")
local size_out = ffi_new("size_t[1]")

local function is_proxy(v)
    if type(v) ~= "table" then
        return nil
    end
    local st = getmetatable(v)
    if type(st) == "table" and rawget(st, "__qjson") then
        return st
    end
    return nil
end

-- The out-structure of qjson_field_value / qjson_index_value: a child's
-- cursor and, for a scalar, its value, in one call.
local val_out = ffi_new("qjson_value")

--- The value of the child in `val_out` (just read) of proxy state `st`.
local function child_value(st)
    local t = val_out.at.type
    if t == STRING then
        return (ffi_string(val_out.str, val_out.len))
    elseif t == NUMBER then
        return val_out.num
    elseif t == OBJECT or t == ARRAY then
        return (new_proxy(st.h, st.s, val_out.at, t, st, false, getmetatable(st),
            tonumber(val_out.len)))
    elseif t == BOOL then
        return val_out.num ~= 0
    end
    return null
end

-- The journal of the patch being applied (see "patches"): a flat list of
-- undo records, `jn` slots long; nil outside qjson.patch / merge_patch.
-- Edits log what they change there while it is open. A record is its
-- fields, then its tag (undo reads backwards): 1 = a dirty flag raised
-- {st}, 2 = a key state replaced {ks, key, old state or false}, 3 = a
-- proxy saved by touch, 4 = a plain table saved by touch.
local J, jn = nil, 0

-- A proxy made dirty joins its parent's `kids` (the dirty child views the
-- encoder asks about: no walk over the whole cache), once: only the
-- false -> true change of `dirty` appends, and a patch's undo removes
-- what it appended. A tail call, not a loop: a loop here, entered from a
-- trace being recorded (a set inside the caller's loop), aborted that
-- trace ("inner loop in root trace").
local function mark_dirty(st)
    if st ~= nil and not st.dirty then
        st.dirty = true
        local p = st.parent
        if p ~= nil then
            local kids = p.kids
            if not kids then
                kids = table_new(4, 0)
                p.kids = kids
            end
            kids[#kids + 1] = st
        end
        if J ~= nil then
            J[jn + 1], J[jn + 2] = st, 1
            jn = jn + 2
        end
        return mark_dirty(p)
    end
end

--- The edit state of `st`, made on first use. The document owns it (it
--- is freed with st.h): no finaliser of its own, which would cost a
--- registration per edited container and, run by a GC step while LuaJIT
--- records a trace, abort the trace. `st.e` keeps its address as a Lua
--- number, cast to a pointer at each call: a boxed pointer kept in the
--- state was an allocation, and its share of the collector's work, per
--- edited container (a cast passed straight to a C call is not allocated
--- in a trace). The cast is written out at each call: a helper function
--- for it changed which traces LuaJIT recorded, and merge_patch's loops
--- then aborted ("inner loop in root trace") and ran in the interpreter.
local edit_state -- (st [, plan]) -> qjson_edit *
do
    local edit_out = ffi_new("qjson_edit *[1]")
    -- `plan`: the state is only planned (put_proxy, a container whose
    -- children alone were edited): its values table is not made (no value
    -- of its own to keep; a nested edit made it for nothing: 3 of the ~14
    -- Lua objects a 2 KB set of one array element made); the next edit of
    -- the container makes it.
    edit_state = function(st, plan)
        local e = st.e
        if not e then
            local rc = C.qjson_edit_new_owned(st.h, st.cur, edit_out)
            if rc ~= OK then
                raise(rc, nil, 3)
            end
            -- The address as a Lua number (a double), as `adopt` keeps handles:
            -- exact for addresses below 2^53, which holds for x86-64 and arm64
            -- user space today; a platform that tags the top byte of heap
            -- pointers (ARM MTE, Android's scudo) would need the cdata kept
            -- instead (branch wt-luanested has that fallback, not merged).
            e = tonumber(ffi.cast(intptr_t, edit_out[0]))
            st.e = e
        end
        if not plan and not st.vals then
            -- An object's key states (`ks`, string keys) share this table with
            -- its values (integer ids): one table per edited object, not two.
            -- Sized for two edits (136 bytes, not 200 for four: the collector's
            -- work grows with the bytes made, about 4 instructions a byte in
            -- a benchmark's state; more edits grow it).
            st.vals, st.next_id = table_new(2, st.__qjson == OBJECT and 2 or 0), 0
        end
        return (ffi.cast(edit_pt, e))
    end
end

--- A new host value id for `v` in `st`.
local function new_id(st, v)
    local id = st.next_id + 1
    st.next_id = id
    st.vals[id] = v
    return id
end

--- Original element `o` (0-based ordinal) of an array proxy.
local function orig_elem(st, o)
    local cache = st.cache
    local v = cache[o]
    if v ~= nil then
        return v
    end
    local rc = C.qjson_index_value(st.h, st.cur, o, val_out)
    if rc ~= OK then
        raise(rc, nil, 3)
    end
    v = child_value(st)
    if type(v) == "table" then -- a proxy or null (see obj_index)
        own_cache(st)[o] = v
    end
    return v
end

local function arr_len(st)
    local n = st.n
    if not n then
        local rc
        if st.e then
            rc = C.qjson_edit_len(st.h, ffi.cast(edit_pt, st.e), len_out)
        else
            rc = C.qjson_len(st.h, st.cur, "", 0, len_out)
        end
        if rc ~= OK then
            raise(rc, nil, 3)
        end
        n = tonumber(len_out[0])
        st.n = n
    end
    return n
end

local function obj_index(t, k)
    local st = getmetatable(t)
    local ks = st.ks
    if ks then
        -- (ks is the values table too, see edit_state: its number keys are
        -- value ids, not key states.)
        local id = ks[k]
        if id ~= nil and type(k) == "string" then
            if id == 0 then
                return nil
            end
            local vals = st.vals
            id = id < 0 and -id or id
            local v = vals[id]
            if type(v) == "table" and getmetatable(v) == RAW then
                v = RAW.copy(v)
                vals[id] = v
            end
            return v
        end
    end
    local cache = st.cache
    local v = cache[k]
    if v ~= nil then
        return v
    end
    if type(k) ~= "string" then
        return nil
    end
    local rc = C.qjson_field_value(st.h, st.cur, k, #k, val_out)
    if rc ~= OK then
        if rc == NOT_FOUND then
            return nil
        end
        raise(rc, k)
    end
    v = child_value(st)
    -- Only containers are kept (a proxy must be the same on every read); a
    -- scalar is read again from the index on the next read: caching it
    -- made a cache table in every object a scalar was read from, and the
    -- 2 KB request's reads cost 27.6k instructions instead of 24.0k
    -- (callgrind, lua_ab.py's read workload).
    if type(v) == "table" then
        own_cache(st)[k] = v
    end
    return v
end

local function has_orig_key(st, k)
    return C.qjson_field(st.h, st.cur, k, #k, cur_out) == OK
end

local function remove_added(st, k)
    local added = st.added
    for i = 1, #added do
        if added[i] == k then
            table.remove(added, i)
            return
        end
    end
end

local function obj_newindex(t, k, v)
    local st = getmetatable(t)
    if type(k) ~= "string" then
        error("qjson: object proxy keys must be strings, got " .. type(k), 2)
    end
    if J == nil and rawget(st, "e") == false and not st.dirty and st.whole == st then
        local tv = type(v)
        if (tv == "string" or tv == "number" or tv == "boolean") and LIGHT.set(t, st, k, v) then
            return
        end
    end
    local e = edit_state(st)
    local ks = st.ks
    if not ks then
        ks = st.vals -- (see edit_state)
        st.ks = ks
    end
    local old = ks[k]
    if v == nil then
        local rc = C.qjson_edit_delete(st.h, e, k, #k)
        if rc == NOT_FOUND then
            return
        elseif rc ~= OK then
            raise(rc, k)
        end
        if J ~= nil then
            J[jn + 1], J[jn + 2], J[jn + 3], J[jn + 4] = ks, k, old or false, 2
            jn = jn + 4
        elseif old ~= nil and old ~= 0 then
            -- (While a journal is open, values are only added: undo
            -- forgets the ids past the saved count.)
            st.vals[old < 0 and -old or old] = nil
        end
        if old ~= nil and old < 0 then
            -- The added key's patch is gone: the original member, if any,
            -- stays deleted.
            remove_added(st, k)
            ks[k] = has_orig_key(st, k) and 0 or nil
        else
            ks[k] = 0
        end
    else
        local id
        if J ~= nil then
            J[jn + 1], J[jn + 2], J[jn + 3], J[jn + 4] = ks, k, old or false, 2
            jn = jn + 4
            id = new_id(st, v)
        elseif old ~= nil and old ~= 0 then
            id = old < 0 and -old or old
            st.vals[id] = v
        else
            id = new_id(st, v)
        end
        local rc = C.qjson_edit_set(st.h, e, k, #k, id, int_out)
        if rc ~= OK then
            raise(rc, k)
        end
        if int_out[0] ~= 0 then
            if old == nil or old >= 0 then
                local added = st.added
                if not added then
                    added = table_new(4, 0)
                    st.added = added
                end
                added[#added + 1] = k
            end
            ks[k] = -id
        else
            ks[k] = id
        end
    end
    -- (st.cache[k] may keep the original child: reads ask ks first.)
    mark_dirty(st)
end

--- What array slot `i` (1-based, in range) holds.
local function arr_slot(st, i)
    local e = st.e
    if not e then
        return (orig_elem(st, i - 1))
    end
    local rc = C.qjson_edit_slot(st.h, ffi.cast(edit_pt, e), i - 1, slot_out)
    if rc ~= OK then
        raise(rc, nil, 3)
    end
    local o = slot_out[0]
    if o >= 0 then
        return (orig_elem(st, tonumber(o)))
    end
    local vals, id = st.vals, tonumber(-o)
    local v = vals[id]
    if type(v) == "table" and getmetatable(v) == RAW then
        v = RAW.copy(v)
        vals[id] = v
    end
    return v
end

local function arr_index(t, i)
    local st = getmetatable(t)
    if type(i) ~= "number" then
        return nil
    end
    local n = st.n or arr_len(st)
    if i < 1 or i > n or floor(i) ~= i then
        return nil
    end
    return (arr_slot(st, i))
end

--- Insert `v` before 1-based slot `i` (1 <= i <= n + 1) of an array proxy.
local function arr_insert_at(st, i, v)
    local n = arr_len(st)
    local e = edit_state(st)
    local rc = C.qjson_edit_insert(st.h, e, i - 1, new_id(st, v))
    if rc ~= OK then
        raise(rc, nil, 3)
    end
    st.n = n + 1
    mark_dirty(st)
end

--- Remove 1-based slot `i` (in range) of an array proxy.
local function arr_remove_at(st, i)
    local n = arr_len(st)
    local e = edit_state(st)
    local rc = C.qjson_edit_remove(st.h, e, i - 1)
    if rc ~= OK then
        raise(rc, nil, 3)
    end
    st.n = n - 1
    mark_dirty(st)
end

--- Slot `i` (1-based, in range) of an array proxy becomes `v`.
local function arr_put(st, i, v)
    local e = edit_state(st)
    local rc = C.qjson_edit_put(st.h, e, i - 1, new_id(st, v))
    if rc ~= OK then
        raise(rc, nil, 3)
    end
    mark_dirty(st)
end

local function arr_newindex(t, i, v)
    local st = getmetatable(t)
    if type(i) ~= "number" or i < 1 or floor(i) ~= i then
        error("qjson: array proxy index must be a positive integer, got " .. tostring(i), 2)
    end
    local n = arr_len(st)
    if i > n then
        if v == nil then
            return
        end
        -- Past the end: the holes before it are null.
        for j = n + 1, i - 1 do
            arr_insert_at(st, j, nil)
        end
        arr_insert_at(st, i, v)
        return
    end
    if v == nil and i == n then
        -- Removing the last element shortens the array (like t[#t] = nil),
        -- and so do the holes left before it.
        arr_remove_at(st, i)
        local m = i - 1
        while m > 0 and arr_slot(st, m) == nil do
            arr_remove_at(st, m)
            m = m - 1
        end
        return
    end
    arr_put(st, i, v)
end

--- The distinct original keys of an object proxy, in document order.
local function orig_keys(st)
    local keys = st.keys
    if keys then
        return keys
    end
    keys = {}
    local seen = {}
    local it = iter_t()
    local rc = C.qjson_iter_init(st.h, st.cur, "", 0, it)
    if rc ~= OK then
        raise(rc, nil, 3)
    end
    while true do
        rc = C.qjson_iter_next(st.h, it, ptr_out, len_out, cur_out)
        if rc == END then
            break
        elseif rc ~= OK then
            raise(rc, nil, 3)
        end
        local k = ffi_string(ptr_out[0], len_out[0])
        if not seen[k] then
            seen[k] = true
            keys[#keys + 1] = k
        end
    end
    st.keys = keys
    return keys
end

--- The keys of an object proxy as they are now, in order: original keys
--- (minus deleted ones and those deleted and set again), then added keys.
local function current_keys(st)
    local keys = orig_keys(st)
    local ks = st.ks
    if not ks then
        return keys
    end
    local list = {}
    for i = 1, #keys do
        local k = keys[i]
        local id = ks[k]
        if id == nil or id > 0 then
            list[#list + 1] = k
        end
    end
    local added = st.added or {}
    for i = 1, #added do
        list[#list + 1] = added[i]
    end
    return list
end

local function proxy_len(t)
    local st = getmetatable(t)
    if st.__qjson == ARRAY then
        return st.n or arr_len(st)
    end
    return #current_keys(st)
end

local function proxy_pairs(t)
    local st = getmetatable(t)
    if st.__qjson == ARRAY then
        local i = 0
        return function()
            local n = st.n or arr_len(st)
            while i < n do
                i = i + 1
                local v = t[i]
                if v ~= nil then
                    return i, v
                end
            end
            return nil
        end, t, nil
    end
    local keys = current_keys(st)
    local i = 0
    return function()
        while true do
            i = i + 1
            local k = keys[i]
            if k == nil then
                return nil
            end
            local v = t[k]
            if v ~= nil then -- skip keys deleted during the walk
                return k, v
            end
        end
    end, t, nil
end

local function proxy_ipairs(t)
    local i = 0
    return function()
        i = i + 1
        local v = t[i]
        if v ~= nil then
            return i, v
        end
        return nil
    end, t, 0
end

-- `c` is the container's qjson_cursor (copied), `t` its type; `dm` the
-- document's shared fields (doc_meta(h, s) when nil); `n` the number of
-- children when the caller has it (an array keeps it as its length).
new_proxy = function(h, s, c, t, parent, root, dm, n)
    local _ = reg_anchor -- keeps the registry's anchor alive (see "Doc / cursor")
    if dm == nil then
        dm = doc_meta(h, s)
    end
    local st
    local cur = cursor_t(c)
    -- A child's state starts with 8 slots: the fields a read needs, the
    -- others read from ST_DEFAULTS until set. The root's starts with every
    -- field: it is the container most often edited, and an 8-slot state
    -- that gains the edit fields is rehashed (a 2 KB decode + set + encode
    -- cost 19.2k instructions instead of 15.7k with every state lean). The
    -- 2 KB request's reads (three children) cost 20.3k instead of 24.0k.
    -- A child array's starts with every field too: its first edit (a
    -- patch's insert into `messages`) and its first encode as a dirty kid
    -- grew it from 8 to 16 slots (callgrind, lua_ab 2k seeds 0-2: patch
    -- 31.1k -> 28.9k, nested 29.7k -> 27.7k instructions per op; a read of
    -- one child array 20.5k -> 21.1k: 192 more bytes made).
    if not root then
        if t == OBJECT then
            st = { __qjson = OBJECT, __index = obj_index, __newindex = obj_newindex,
                cur = cur, parent = parent, cache = NO_CACHE, dirty = false, e = false }
        else
            st = { __qjson = ARRAY, __index = arr_index, __newindex = arr_newindex,
                cur = cur, parent = parent, cache = NO_CACHE, n = n or false,
                dirty = false, era = false, dirty_now = false, writing = false,
                e = false, vals = false, next_id = 0, kids = false }
        end
    elseif t == OBJECT then
        st = { __qjson = OBJECT, __index = obj_index, __newindex = obj_newindex,
            cur = cur, parent = parent, cache = NO_CACHE,
            dirty = false, era = false, dirty_now = false, writing = false,
            e = false, vals = false, next_id = 0, ks = false, kids = false }
    else
        st = { __qjson = ARRAY, __index = arr_index, __newindex = arr_newindex,
            cur = cur, parent = parent, cache = NO_CACHE, n = n or false,
            dirty = false, era = false, dirty_now = false, writing = false,
            e = false, vals = false, next_id = 0, kids = false }
    end
    if root then
        dm.whole = st
    end
    if LUA52 then
        st.__len, st.__pairs, st.__ipairs = proxy_len, proxy_pairs, proxy_ipairs
    end
    setmetatable(st, dm)
    return (setmetatable({}, st))
end

--- qjson.decode(s [, {max_depth = n}]) -> a lazy proxy (or the scalar, for
--- a scalar document). The whole input is validated first, as cjson.decode
--- and Python's qjson.decode do, so max_depth (as Python's) is its one
--- option; any other raises (OPTIONS.read).
function qjson.decode(s, opts)
    if type(s) ~= "string" then
        error("qjson.decode: expected a string, got " .. type(s), 2)
    end
    local o = nil
    if opts ~= nil then
        o = OPTIONS.read("qjson.decode", opts, OPTIONS.decode, OPTIONS.buf, 2)
    end
    local rc = C.qjson_parse_root(s, #s, o, doc_out, cur_out, size_out)
    if rc ~= OK then
        raise(rc, nil, 2)
    end
    local h = adopt(doc_out[0], s, size_out[0])
    local t = cur_out[0].type
    if t == OBJECT or t == ARRAY then
        return (new_proxy(h, s, cur_out[0], t, nil, true))
    end
    return (scalar(h, cur_out, t))
end

--- Whether `v` is a proxy from qjson.decode.
function qjson.is_proxy(v)
    return is_proxy(v) ~= nil
end

function qjson.len(t)
    if is_proxy(t) then
        return (proxy_len(t))
    end
    return #t
end

function qjson.pairs(t)
    if is_proxy(t) then
        return proxy_pairs(t)
    end
    return next, t, nil
end

function qjson.ipairs(t)
    if is_proxy(t) then
        return proxy_ipairs(t)
    end
    return ipairs(t)
end

--- qjson.insert(t, [pos,] v): table.insert for array proxies (and plain
--- tables): `v` goes before position `pos` (1 <= pos <= len + 1; default:
--- the end).
function qjson.insert(t, pos, v)
    local st = is_proxy(t)
    if st == nil then
        if v == nil then
            table.insert(t, pos)
        else
            table.insert(t, pos, v)
        end
        return
    end
    if st.__qjson ~= ARRAY then
        error("qjson.insert: expected an array, got an object proxy", 2)
    end
    local n = arr_len(st)
    if v == nil then
        pos, v = n + 1, pos
    end
    if type(pos) ~= "number" or floor(pos) ~= pos or pos < 1 or pos > n + 1 then
        error("qjson.insert: position out of bounds", 2)
    end
    arr_insert_at(st, pos, v)
end

--- qjson.append(t, v): `v` after the last element.
function qjson.append(t, v)
    local st = is_proxy(t)
    if st == nil then
        t[#t + 1] = v
        return
    end
    if st.__qjson ~= ARRAY then
        error("qjson.append: expected an array, got an object proxy", 2)
    end
    arr_insert_at(st, arr_len(st) + 1, v)
end

--- qjson.remove(t [, pos]) -> the removed value: table.remove for array
--- proxies (and plain tables); default: the last element.
function qjson.remove(t, pos)
    local st = is_proxy(t)
    if st == nil then
        if pos == nil then
            return table.remove(t)
        end
        return table.remove(t, pos)
    end
    if st.__qjson ~= ARRAY then
        error("qjson.remove: expected an array, got an object proxy", 2)
    end
    local n = arr_len(st)
    if pos == nil then
        if n == 0 then
            return nil
        end
        pos = n
    end
    if type(pos) ~= "number" or floor(pos) ~= pos or pos < 1 or pos > n then
        error("qjson.remove: position out of bounds", 2)
    end
    local v = arr_slot(st, pos)
    arr_remove_at(st, pos)
    return v
end

--- Plain Lua tables from proxies (recursively; JSON null stays qjson.null).
--- Plain tables are copied with their values materialized; scalars are
--- returned as they are.
local function materialize(v, depth)
    if type(v) ~= "table" or v == null then
        return v
    end
    if depth > MAX_DEPTH then
        error(format("qjson.materialize: excessive nesting (%d)", depth), 0)
    end
    local r = {}
    if is_proxy(v) then
        local st = getmetatable(v)
        if st.__qjson == ARRAY then
            -- Holes (nil values set) are null.
            for i = 1, st.n or arr_len(st) do
                local x = v[i]
                if x == nil then
                    x = null
                end
                r[i] = materialize(x, depth + 1)
            end
            if r[1] == nil then
                setmetatable(r, qjson.empty_array_mt)
            end
        else
            for k, x in proxy_pairs(v) do
                r[k] = materialize(x, depth + 1)
            end
        end
    else
        for k, x in next, v do
            r[k] = materialize(x, depth + 1)
        end
        if getmetatable(v) == qjson.empty_array_mt then
            setmetatable(r, qjson.empty_array_mt)
        end
    end
    return r
end

function qjson.materialize(v)
    return materialize(v, 1)
end

-- ---------------------------------------------------------------- encode (proxies)

-- The walk of dirty views: each qjson.encode call is an era; is_dirty notes
-- its answer per proxy for the era (`era`, declared above qjson.encode).
local views_buf = ffi_new("qjson_cursor[?]", 64)
local views_cap = 64
local segs_out = ffi_new("const qjson_seg *[1]")

--- Whether proxy state `st` has edits to write (its own, or a cached
--- child's); the children's answers are noted too.
local function is_dirty(st)
    if not st.dirty then
        return false
    end
    if st.era == era then
        return st.dirty_now
    end
    local e = st.e
    local d = e and C.qjson_edit_changed(ffi.cast(edit_pt, e)) ~= 0 or false
    local kids = st.kids
    if kids then
        for i = 1, #kids do
            if is_dirty(kids[i]) then
                d = true
            end
        end
    end
    st.era, st.dirty_now = era, d
    return d
end

-- Spans of the input from COPY_MIN bytes up are copied by qjson_copy, not
-- by the buffer's memcpy: glibc copies those with `rep movsb`, which AMD
-- Zen 3 runs several times slower at some relative offsets of the two
-- buffers (an insertion shifts the rest of the output by its length): a
-- 100 KB patch took 47 us instead of 15 us, or not, as the allocator and
-- address randomisation placed the buffers (src/capi/copy.rs).
local COPY_MIN = 2048
local copy = C.qjson_copy

--- `n` bytes at `p` (cdata pointer) into buffer `b`.
local function put_span(b, p, n)
    if n < COPY_MIN then
        b:putcdata(p, n)
        return
    end
    local dst = b:reserve(n)
    copy(dst, p, n)
    b:commit(n)
end

--- The original text of the container `st` (the root: the whole input).
local function put_clean(b, st)
    if st.whole == st then
        local s = st.s
        put_span(b, ffi.cast(charp_t, s), #s)
        return
    end
    local rc = C.qjson_span(st.h, st.cur, "", 0, len_out, len_out + 1)
    if rc ~= OK then
        raise(rc, nil, 3)
    end
    local a = len_out[0]
    put_span(b, ffi.cast(charp_t, st.s) + a, len_out[1] - a)
end

put_proxy = function(b, t, st, depth, stack)
    if not is_dirty(st) then
        put_clean(b, st)
        return
    end
    -- Being written in this encode call: a cycle (an encode that failed
    -- half-way left an older era here, which does not count).
    if st.writing == era then
        error("Cannot serialise table: cycle detected", 0)
    end
    local e = edit_state(st, true)
    -- The dirty child views (is_dirty(st) has just asked each of them), in
    -- a list of the cursors the plan names them by (a view id is a
    -- position in it). When every kid is dirty (the rule: a kid is clean
    -- again only when its edits were undone) the list is `kids` itself: a
    -- table of their own per edited container with dirty children, per
    -- encode, cost its allocation and collection. (A clean kid cannot be
    -- a view: a view is written as its container's bytes alone, and an
    -- array's plan copies an untouched element with the whitespace around
    -- it.)
    local views, nv = nil, 0
    local kids = st.kids
    if kids then
        views = kids
        for i = 1, #kids do
            local cst = kids[i]
            if cst.dirty_now and cst.era == era then
                if nv == views_cap then
                    local bigger = ffi_new("qjson_cursor[?]", 2 * views_cap)
                    ffi.copy(bigger, views_buf, ffi.sizeof("qjson_cursor") * nv)
                    views_buf, views_cap = bigger, 2 * views_cap
                end
                views_buf[nv] = cst.cur
                nv = nv + 1
                if views ~= kids then
                    views[nv] = cst
                end
            elseif views == kids then
                -- The first clean kid: the dirty ones before it, in a list
                -- of their own.
                views = table_new(4, 0)
                for j = 1, nv do
                    views[j] = kids[j]
                end
            end
        end
    end
    local rc = C.qjson_edit_plan(st.h, e, views_buf, nv, segs_out, size_out)
    if rc ~= OK then
        raise(rc, nil, 2)
    end
    local segs, n = segs_out[0], tonumber(size_out[0])
    local vals = st.vals
    st.writing = era
    for i = 0, n - 1 do
        local s = segs[i]
        local kind = s.kind
        if kind == 0 then
            put_span(b, s.p, s.len)
        elseif kind == 1 then
            encode_value(b, vals[s.id], depth, stack)
        else
            put_proxy(b, nil, views[s.id + 1], depth, stack)
        end
    end
    st.writing = false
end

-- ---------------------------------------------------------------- light edits

--[[ The first edit of an unedited root object, when it replaces a member
that the document has by a string, number or boolean (t.model = "x", the
gateway's usual edit), is kept on the Lua side alone: no edit state, no
plan. qjson_member_span gives the object's bytes and the member value's,
when the object's keys are distinct (its member table: the plan would then
splice the value in place, so the bytes are the same), and qjson.encode
writes the object's bytes with the value's text spliced in. A 2 KB decode +
one such set + encode cost 1.9x the passthrough with the edit state (its
box, the member table, the plan, the state's drop at the next sweep,
spread over many cache lines of code and data); the light path is the
passthrough plus one lookup and the splice (see LIGHT.encode).
While light, the state's `e`, `ks`, `vals` are nil (an edited state has
them, an unedited one has false), and its metatable is a record of its own,
{dm, t, k, v, cs, ce, a, z, __index = light_index} (the document's fields
`dm`, the proxy, the key and value set, the object's bytes [cs, ce) and the
old value's [a, z)), kept in the array part: with named fields it was a
16-node hash table, 544 bytes of Lua heap per set instead of 280, and a
2 KB set ran ~2.5-5% slower (939 vs 916 ns, 951 vs 904 in the other order;
standalone, the bench's PGO library). Its __index, asked for any field
the state lacks, makes the edit a real
one first (promote: the state as it would have been, then the field read
again); the document's fields (h, s, whole) are answered without that. So
every reader of the edit fields, present or to come (reads through the
proxy, pairs, len, patches, merge patches, further edits, encoding inside a
table), sees a real edit state. Only qjson.encode of the root itself, and
obj_newindex's test for a light edit, look at the fields raw; and a child
edited since (the root's `kids`) sends qjson.encode to the full path,
whose first read of `e` promotes the light edit. ]]
do
    local span_out = ffi_new("size_t[4]")
    local promote

    local function light_index(st, key)
        if key == "h" or key == "s" or key == "whole" then
            return getmetatable(st)[1][key]
        end
        promote(st)
        return st[key]
    end

    --- Make the light edit of state `st` a real one (its state as a set
    --- through obj_newindex would have left it).
    promote = function(st)
        local L = getmetatable(st)
        setmetatable(st, L[1])
        -- (`dirty` stays set: obj_newindex then makes no light edit again,
        -- and a root has no parent to tell.)
        st.e, st.ks, st.vals = false, false, false
        -- Not an edit of any patch being applied: it was made before.
        local j, n = J, jn
        J = nil
        local ok, err = pcall(obj_newindex, L[2], L[3], L[4])
        J, jn = j, n
        if not ok then
            -- Still light, so the edit is not lost (an edit state the call
            -- made belongs to the document, which frees it).
            st.e, st.ks, st.vals = nil, nil, nil
            setmetatable(st, L)
            error(err, 0)
        end
    end

    --- Keep `t[k] = v` (`st` = t's state, an unedited root object; `v` a
    --- string, number or boolean) as a light edit when `k` is a member
    --- the splice can replace; false when not.
    LIGHT.set = function(t, st, k, v)
        if C.qjson_member_span(st.h, st.cur, k, #k, span_out) ~= OK then
            return false
        end
        st.e, st.ks, st.vals = nil, nil, nil
        -- `dirty_now` too: own() (a proxy put into another document by a
        -- patch) reads it after compact_of's encode, which takes the light
        -- path and so never asks is_dirty.
        st.dirty, st.dirty_now = true, true
        setmetatable(st, { getmetatable(st), t, k, v, tonumber(span_out[0]),
            tonumber(span_out[1]), tonumber(span_out[2]), tonumber(span_out[3]),
            __index = light_index })
        return true
    end

    --- The text of the root whose state `st` holds a light edit.
    LIGHT.encode = function(st)
        local L = getmetatable(st)
        local p = ffi.cast(charp_t, L[1].s)
        local cs, ce = L[5], L[6]
        out:reset()
        put_span(out, p + cs, L[7] - cs)
        encode_value(out, L[4], 0, stack)
        local z = L[8]
        put_span(out, p + z, ce - z)
        local s = out:tostring()
        if #out > KEEP_MAX then
            out:free()
        else
            out:reset()
        end
        return s
    end
end

-- ---------------------------------------------------------------- patches

--[[ qjson.patch(t, ops) (RFC 6902), qjson.merge_patch(t, patch) (RFC 7396),
qjson.incr(t, path [, by]) and qjson.mul(t, path, by) (ReJSON NUMINCRBY /
NUMMULTBY), on proxies (and plain tables inside them), as the Python
functions of the same names do (src/python/patch.rs; the pointer and index
rules are those of src/patch.rs).

Edits go through the proxies' overlay (obj_newindex, the array slots), so
encode splices them. Values put into the document are the document's own:
an untouched proxy becomes a fresh proxy of the same bytes (a text patch's
values are written as their original text), an edited one becomes a proxy
of its compact text (src/compact.rs: the bytes Python writes for the value it
materializes, in the proxy's order), plain tables are copied; `move` moves
the value itself. A merge patch that builds a new object from a patch object
holding nulls builds it as that text too (put_merged), not as a plain table
(written in Lua's hash order): the same bytes from both edges. A value put
again and again (one patch applied to every request) may go into a proxy as
a shared record of its text instead (RAW; see own() and plan_new): read
back, it is a value of its own, as above.

Atomic: while a patch runs, a journal is open (J): before a container is
first changed, the core saves its edit state inside it (qjson_edit_save)
and the journal keeps the proxy's added keys, length and value count, or
a plain table's contents; the edits log each key state they replace and
each dirty flag they raise, and only add values. A failing op undoes the
journal newest first (qjson_edit_restore for the core states) and raises
a PatchError: a table {message =, op_index = (0-based)} whose metatable
is qjson.PatchError (tostring gives the message).

Plain tables: an empty plain table counts as an object (as encode writes
it). Numbers are Lua numbers (doubles): incr/mul on integers beyond 2^53
are not exact here (they are in Python). ]]

-- The section is a block: its locals are not the main chunk's (LuaJIT
-- allows 200 locals in a function), only what it puts into `qjson` is.
do

    local byte, sub = string.byte, string.sub

    local PatchError = { __tostring = function(e) return "qjson: " .. e.message end }
    PatchError.__index = PatchError
    qjson.PatchError = PatchError

    --[[ An op's failure is a value, not an error: a function of the walk
    that fails returns `Fail` (its message in `Fail.message`), and each
    caller returns it on, up to qjson.patch, which undoes the journal and
    raises once. The walk runs without pcall: a trace that ended an op
    returned into pcall's frame ("NYI: return to lower frame"), was
    blacklisted, and the ops after it ran in the interpreter (how often
    depended on each process's trace draws). Errors that are not op
    failures (a C call's status, raise) undo an open journal themselves
    (journal_abort, called by raise), so a failing patch still leaves its
    target as it was. ]]
    -- Returned by the walk's functions when an op fails; `Fail.message`
    -- says why (a field, not a local: the main chunk is at LuaJIT's 200).
    local Fail = { message = false }

    local function fail(msg)
        Fail.message = msg
        return Fail
    end

    --[[ User code inside a patch: a plain table's metamethods (__index,
    __newindex, __len, __tostring) run user code, whose errors do not go
    through raise(). A patch first runs without pcall; the walk checks each
    plain table before it reads or writes it (`Fail.unsafe`), and at the first
    one with a metatable of the user's, before any of its metamethods ran,
    it returns Fail with `Fail.message == Fail.retry`: qjson.patch undoes
    what the ops changed so far and runs the patch again under one pcall,
    which undoes the journal on any error and raises it unchanged. The
    checks apply only to that first run (`Fail.bare`, cleared when it ends,
    by raise() through journal_abort, and by merge_patch, which always
    runs under its pcall). A patch over proxies and metatable-free tables (the common
    case) so keeps the compiled returns a pcall frame would cost (a 2 KB
    3-op patch: 33.9k instructions per op without it, 43.4k with one pcall
    per patch). An error from outside user code (out of memory) in the
    first run leaves the ops applied so far (the next patch, or the next
    error raised, forgets the journal left open). The walk compares user
    values with `rawequal`, never `==` (a cdata's `==` calls its ffi
    metatype's __eq), and stops at every cdata (`Fail.unsafe`). ]]
    Fail.retry, Fail.bare = {}, false

    --- Whether the walk must stop before using `v` (see above): in a
    --- patch's first run (not under pcall), and `v` a table or userdata
    --- whose metatable may run user code (not a proxy's, not qjson.null's
    --- or qjson.empty_array_mt), or any cdata.
    Fail.unsafe = function(v)
        if not Fail.bare then
            return false
        end
        local tv = type(v)
        if tv ~= "table" and tv ~= "userdata" and tv ~= "cdata" then
            return false
        end
        -- (qjson.null's metatable is qjson's own. A cdata's is hidden,
        -- getmetatable says "ffi": any cdata may be an ffi metatype with an
        -- __eq, __index or __tostring of the user's, so the walk, which
        -- compares user values only by rawequal, stops at every one.)
        if rawequal(v, null) then
            return false
        end
        local mt = getmetatable(v)
        if tv ~= "cdata" and (mt == nil or mt == qjson.empty_array_mt) then
            return false
        end
        if type(mt) == "table" and rawget(mt, "__qjson") then
            return false
        end
        Fail.message = Fail.retry
        return true
    end

    --- The unescaped tokens of JSON Pointer `p` ("" has none). Parsed
    --- pointers are kept (a gateway applies the same patch to every request);
    --- the cache is dropped when it holds POINTER_CACHE_MAX of them.
    local POINTER_CACHE_MAX = 256
    local pointer_cache, pointer_cached = {}, 0

    local function pointer_tokens(p)
        local tokens = pointer_cache[p]
        if tokens ~= nil then
            return tokens
        end
        if type(p) ~= "string" then
            return fail("a path must be a string")
        end
        tokens = {}
        if p ~= "" then
            if byte(p, 1) ~= 47 then -- "/"
                return fail(format("path %q is not a JSON Pointer", p))
            end
            local escaped = find(p, "~", 1, true) ~= nil
            if escaped and (find(p, "~[^01]") or find(p, "~$")) then
                return fail(format("bad JSON Pointer %q: '~' must be followed by '0' or '1'", p))
            end
            local pos = 2
            while true do
                local slash = find(p, "/", pos, true)
                local tok = sub(p, pos, slash and slash - 1 or #p)
                if escaped then
                    tok = gsub(gsub(tok, "~1", "/"), "~0", "~")
                end
                tokens[#tokens + 1] = tok
                if not slash then
                    break
                end
                pos = slash + 1
            end
        end
        if pointer_cached >= POINTER_CACHE_MAX then
            pointer_cache, pointer_cached = {}, 0
        end
        pointer_cache[p] = tokens
        pointer_cached = pointer_cached + 1
        return tokens
    end

    --- A patch given as JSON text, decoded once: a gateway applies the same
    --- few texts to every request, and the decoded proxy keeps what reads
    --- learn (its keys, its children), so the next use skips the parse and
    --- the key walk. The patch functions only read a patch (values are put
    --- into the target through `own`, as fresh proxies), so a cached proxy
    --- never changes. Texts up to TEXT_CACHE_LEN bytes are kept; the cache is
    --- dropped when it holds TEXT_CACHE_MAX of them.
    local decode_text
    do
        local TEXT_CACHE_MAX, TEXT_CACHE_LEN = 64, 64 * 1024
        local text_cache, text_cached = {}, 0

        decode_text = function(text)
            local v = text_cache[text]
            if v ~= nil then
                return v
            end
            v = qjson.decode(text)
            if #text <= TEXT_CACHE_LEN then
                if text_cached >= TEXT_CACHE_MAX then
                    text_cache, text_cached = {}, 0
                end
                text_cache[text] = v
                text_cached = text_cached + 1
            end
            return v
        end
    end

    --- The 0-based position `tok` names in an array of `n` (insert: `-` and n
    --- allowed).
    local function array_pos(tok, n, insert)
        if tok == "-" then
            if insert then
                return n
            end
            return fail("'-' names no existing array element")
        end
        if not (tok == "0" or find(tok, "^[1-9]%d*$")) then
            return fail(format("%q is not an array index", tok))
        end
        local i = tonumber(tok)
        if i > n or (i == n and not insert) then
            return fail(format("array index %s out of range (length %d)", tok, n))
        end
        return i
    end

    -- The kind of a container: OBJECT, ARRAY, or nil for scalars.
    local function kind_of(v)
        if type(v) ~= "table" or v == null then
            return nil
        end
        local st = is_proxy(v)
        if st then
            return st.__qjson
        end
        if rawget(v, 1) ~= nil or getmetatable(v) == qjson.empty_array_mt then
            return ARRAY
        end
        return OBJECT
    end

    local function c_len(v, k)
        if k == ARRAY then
            local st = is_proxy(v)
            if st then
                return st.n or arr_len(st)
            end
            return #v
        end
        return 0
    end

    local function c_get(v, k, key)
        if k == ARRAY then
            return v[key + 1]
        end
        return v[key]
    end

    local function arr_insert(v, i, x)
        local st = is_proxy(v)
        if not st then
            table.insert(v, i + 1, RAW.plain(x))
            return
        end
        arr_insert_at(st, i + 1, x)
    end

    local function arr_remove(v, i)
        local st = is_proxy(v)
        if not st then
            table.remove(v, i + 1)
            if v[1] == nil and getmetatable(v) == nil then
                setmetatable(v, qjson.empty_array_mt) -- still an array when emptied
            end
            return
        end
        arr_remove_at(st, i + 1)
    end

    local function arr_replace(v, i, x)
        local st = is_proxy(v)
        if not st then
            v[i + 1] = RAW.plain(x)
            return
        end
        arr_put(st, i + 1, x)
    end

    local function shallow(t)
        if not t then
            return t
        end
        local c = {}
        for k, v in next, t do
            c[k] = v
        end
        return c
    end

    --- Save container `v` before its first change in this patch (the journal,
    --- J, is open). A proxy: its core edit state is saved inside the state
    --- (qjson_edit_save: no copy for this side to free), and of its own
    --- fields, those that edits replace rather than log (added keys, array
    --- length, value count); key states and dirty flags are logged by the
    --- edits themselves, values are only added while J is open. A plain
    --- table: a copy of its contents. The containers saved in this patch are
    --- the keys of `jseen` (made with room for 4: a patch touches a few),
    --- not a field of the proxy state: the root's state holds 16 keys, and a
    --- 17th rehashed it to 32 slots on every patch (callgrind, 2 KB decode +
    --- a 1-op patch: 18.8k instructions per op with the field, 16.4k here;
    --- the 3-op patch 40.7k -> 38.6k). Its table is kept from patch to patch
    --- (emptied at each close), unless a patch saved more than JSEEN_KEEP
    --- containers: a table per patch was an allocation and its collection.
    local jseen = nil
    local jseen_t, jseen_n, JSEEN_KEEP = table_new(0, 4), 0, 32
    local function touch(v)
        local seen = jseen
        if seen == nil then
            seen = jseen_t
            jseen = seen
        end
        if seen[v] then
            return
        end
        seen[v] = true
        jseen_n = jseen_n + 1
        local st = is_proxy(v)
        if not st then
            J[jn + 1], J[jn + 2], J[jn + 3] = v, shallow(v), 4
            jn = jn + 3
            return
        end
        local e = st.e
        if e then
            local rc = C.qjson_edit_save(ffi.cast(edit_pt, e))
            if rc ~= OK then
                raise(rc, nil, 2)
            end
        end
        local added = st.added
        J[jn + 1], J[jn + 2], J[jn + 3], J[jn + 4], J[jn + 5], J[jn + 6] =
            st, added and shallow(added), st.n or false, st.next_id, e, 3
        jn = jn + 6
    end

    -- The journal's table, kept from patch to patch (emptied at each close,
    -- as jseen_t), unless a patch wrote more than 1024 slots: a table
    -- made per patch grew from empty (a 2 KB 3-op patch writes ~30 slots:
    -- six resizes and their rehash per patch). (A field, not a local: the
    -- main chunk is at LuaJIT's 200.) A journal in use is not kept there:
    -- open takes the table off, a close that finishes puts it back emptied.
    -- So a patch started while another's undo runs (a user __newindex of a
    -- plain table being restored may call qjson.patch: J is nil by then)
    -- gets a table of its own, not the one the undo is walking; and a close
    -- that raised part-way, or journal_abort's forgetting, drops the table
    -- with whatever it still references rather than keep that alive.
    Fail.jkeep = table_new(32, 0)

    --- Open the journal. (Not re-entrant: a qjson.patch or merge_patch
    --- called from a user metamethod while another is applied raises an
    --- error before it touches anything; see qjson.patch.)
    local function journal_open()
        local j = Fail.jkeep
        if j then
            Fail.jkeep = false
        else
            j = table_new(32, 0)
        end
        J, jn, jseen = j, 0, nil
        -- (Empty unless the last close raised part-way: stale entries
        -- would make touch() skip saving a container.)
        if jseen_n > 0 then
            jseen_t, jseen_n = table_new(0, 4), 0
        end
    end

    --- Close the journal; `undo`: put back everything it saved, newest first.
    local function journal_close(undo)
        local j, n = J, jn
        J = nil -- edits made below are not logged
        if undo then
            local i = n
            while i > 0 do
                local tag = j[i]
                if tag == 1 then -- a dirty flag raised
                    local st = j[i - 1]
                    st.dirty = false
                    local p = st.parent
                    if p ~= nil then
                        -- It was the last kid appended (undo goes newest first).
                        local kids = p.kids
                        kids[#kids] = nil
                    end
                    i = i - 2
                elseif tag == 2 then -- a key state replaced
                    local old = j[i - 1]
                    j[i - 3][j[i - 2]] = old or nil
                    i = i - 4
                elseif tag == 3 then -- a proxy saved
                    local st, e = j[i - 5], j[i - 1]
                    st.added, st.n = j[i - 4], j[i - 3]
                    local next_id, vals = j[i - 2], st.vals
                    if vals then
                        for id = next_id + 1, st.next_id do
                            vals[id] = nil
                        end
                    end
                    st.next_id = next_id
                    -- A state this patch made (the container had none) is
                    -- kept, emptied, with its values table: the document owns
                    -- it until it is freed, so dropping it here left one state
                    -- per failed patch (a loop of failing patches grew memory
                    -- without bound); the next edit reuses it.
                    local made = st.e
                    if e then
                        local rc = C.qjson_edit_restore(ffi.cast(edit_pt, e))
                        if rc ~= OK then
                            raise(rc, nil, 2)
                        end
                    elseif made then
                        local rc = C.qjson_edit_reset(ffi.cast(edit_pt, made))
                        if rc ~= OK then
                            raise(rc, nil, 2)
                        end
                    end
                    i = i - 6
                else -- 4, a plain table saved
                    local v, copy = j[i - 2], j[i - 1]
                    for k in next, shallow(v) do
                        v[k] = nil
                    end
                    for k, x in next, copy do
                        v[k] = x
                    end
                    i = i - 3
                end
            end
        end
        -- table.clear, not a loop: a loop here made a trace of its own, and
        -- what follows the patch was recorded as its side trace until that
        -- was too long.
        if n <= 1024 then
            if n > 0 then
                table_clear(j)
            end
            Fail.jkeep = j
        end
        if jseen ~= nil then
            if jseen_n > JSEEN_KEEP then
                jseen_t = table_new(0, 4)
            else
                table_clear(jseen)
            end
        end
        jn, jseen, jseen_n = 0, nil, 0
    end

    --- The compact form of JSON text `text` (src/compact.rs): what Python
    --- writes for the value once materialized.
    local function compact_text(text)
        local rc = C.qjson_compact(text, #text, ptr_out, len_out)
        if rc ~= OK then
            raise(rc, nil, 3)
        end
        return (ffi_string(ptr_out[0], len_out[0]))
    end

    --- The compact form of Lua value `v`: what Python writes for it. It is
    --- encoded with 17 significant digits (exact_numbers, enough to read
    --- back the same doubles), then compact_text writes each double in its
    --- shortest form. own() and put_merged both use it, so a number copied
    --- out of an edited proxy and one set on a merge patch are written alike.
    local function compact_of(v)
        exact_numbers = true
        local encoded, text = pcall(qjson.encode, v)
        exact_numbers = false
        if not encoded then
            journal_abort()
            error(text, 0)
        end
        return compact_text(text)
    end

    --[[ Plain values put again: a gateway applies the same patch table to
    every request, so the same value table (an op's `value`) is copied into
    each document, and each encode walks the copy again: its keys, an FFI
    call per string, its closing; a 2 KB 3-op patch spent a fifth of its time
    on the copy of {role =, content =} and its writing (LuaJIT's profiler).
    A flat plain table (members all strings, booleans, qjson.null or finite
    numbers; keys all strings, or 1..n) that own() meets a second time gets
    a record (RAW): the copy own() makes and its text, written once by the
    encoder itself (the bytes encode writes for the copy). Each later own()
    of the table checks it against the copy, member by member (rawequal,
    and the sign of a zero: 0 and -0 are equal but written apart), and puts
    the record into the document in place of a new copy; encode writes its
    text. The record's copy is never handed out: a read of the value gives a
    fresh copy (RAW.copy), so the record, shared by every document it went
    into, cannot change. A table seen once costs one weak-table entry; one
    whose members changed gets a new record. ]]
    -- (Fields of RAW, not locals: the main chunk is at LuaJIT's 200.)
    RAW.of = setmetatable({}, { __mode = "k" }) -- value table -> true | record
    RAW.buf, RAW.stack = buffer.new(), {}

    --- The record of `v` if one is kept and `v` still matches it.
    function RAW.match(rec, v)
        local c, n = rec.c, 0
        for k, x in next, v do
            local y = rawget(c, k)
            if not rawequal(x, y) or (x == 0 and 1 / x ~= 1 / y) then
                return false
            end
            n = n + 1
        end
        return n == rec.n and (getmetatable(v) or false) == rec.mt
    end

    --- A record for plain table `v`, or nil when it is not flat (see above)
    --- or has a metatable other than qjson.empty_array_mt (own() does not
    --- copy a metatable of the user's).
    function RAW.new(v)
        local mt = getmetatable(v)
        if mt ~= nil and mt ~= qjson.empty_array_mt then
            return nil
        end
        local c, n, strings, ks = table_new(#v, 4), 0, true, {}
        for k, x in next, v do
            local tx = type(x)
            if not (tx == "string" or tx == "boolean" or rawequal(x, null)
                    or (tx == "number" and x == x and x ~= huge and x ~= -huge)) then
                return nil
            end
            if type(k) ~= "string" then
                strings = false
            end
            c[k] = x
            n = n + 1
            ks[n] = k
        end
        if n == 0 or (not strings and n ~= #c) then
            return nil -- empty, or keys neither all strings nor 1..n
        end
        if not strings then
            for i = 1, n do
                if rawget(c, i) == nil then
                    return nil
                end
            end
        end
        mt = mt or false
        if mt then
            setmetatable(c, mt)
        end
        local b = RAW.buf
        b:reset()
        encode_value(b, c, 0, RAW.stack)
        -- (ks: the insertion order RAW.copy repeats; an array needs none.)
        return setmetatable({ c = c, n = n, ks = strings and ks or nil, mt = mt,
                              text = b:tostring() }, RAW)
    end

    --- `v` itself, or a value of its own when it is a record (a value put
    --- into a plain table, or made the root, is the user's to read).
    function RAW.plain(v)
        if type(v) == "table" and getmetatable(v) == RAW then
            return (RAW.copy(v))
        end
        return v
    end

    --- `v` as a value of the document (see above); `rec`: a record may be
    --- given for a plain value (the op's value of add and replace: op_add and
    --- op_remove put it into proxies only, RAW.plain elsewhere).
    local function own(v, depth, rec)
        if type(v) ~= "table" or v == null then
            return v
        end
        depth = (depth or 0) + 1
        if depth > MAX_DEPTH then
            return fail("value nested too deeply")
        end
        local st = is_proxy(v)
        if not st and Fail.unsafe(v) then
            return Fail
        end
        if st then
            if st.dirty then
                -- An edited proxy: Python materializes it (its own dicts and
                -- lists, in the view's order, written compact); here, a
                -- proxy of that compact text (a plain table would be written
                -- in Lua's hash order). encode() asked is_dirty: `dirty` is
                -- only a hint, `dirty_now` says whether edits remain.
                local text = compact_of(v)
                if st.dirty_now then
                    return (qjson.decode(text))
                end
            end
            -- A fresh proxy of the same bytes. A child shares its
            -- document's fields (dm, as a child read does: a table of its
            -- own per value put, 4 keys, was an allocation per merge of an
            -- object member); a root gets its own, whose `whole` it is.
            if st.whole == st then
                return new_proxy(st.h, st.s, st.cur, st.__qjson, nil, true)
            end
            return new_proxy(st.h, st.s, st.cur, st.__qjson, nil, false, getmetatable(st))
        end
        if rec then
            local of = RAW.of
            rec = of[v]
            if rec == nil then
                of[v] = true -- seen once
            elseif rec then
                if rec ~= true and RAW.match(rec, v) then
                    return rec
                end
                rec = RAW.new(v)
                of[v] = rec or false -- false: not flat, no record
                if rec then
                    return rec
                end
            end
        end
        -- With room for 4 keys (a copy grown key by key was rehashed at
        -- each power of two: an op's value {role =, content =} twice), not
        -- sized by a count of the keys: that loop was an inner loop that
        -- ended the patch's root traces (callgrind, 2 KB 3-op patch, seeds
        -- 0-3: 39.3k -> 35.2k instructions per op, spread 10.7k -> 4.2k).
        local c = table_new(#v, 4)
        for k, x in next, v do
            x = own(x, depth)
            if rawequal(x, Fail) then
                return Fail
            end
            c[k] = x
        end
        if getmetatable(v) == qjson.empty_array_mt then
            setmetatable(c, qjson.empty_array_mt)
        end
        return c
    end

    RAW.own = own

    --- The keys of an object (proxy or plain table).
    local function object_keys(v)
        local st = is_proxy(v)
        if st then
            return current_keys(st)
        end
        local keys = {}
        for k in next, v do
            keys[#keys + 1] = k
        end
        return keys
    end

    --- JSON equality (numbers by value, true is not 1, members in any order);
    --- `b`'s members are looked up in `a`.
    local function json_eq(a, b, depth)
        if depth > MAX_DEPTH then
            return fail("value nested too deeply")
        end
        if Fail.unsafe(a) or Fail.unsafe(b) then
            return Fail
        end
        local ka, kb = kind_of(a), kind_of(b)
        if ka == nil or kb == nil then
            return ka == kb and a == b
        end
        if ka ~= kb then
            -- An empty plain table reads as an object: equal to an empty
            -- array. A proxy's object is an object: `{}` in the document
            -- is not `[]` (RFC 6902, and Python's test).
            local o = ka == OBJECT and a or b
            return not is_proxy(o) and c_len(a, ka) == 0 and c_len(b, kb) == 0 and #object_keys(o) == 0
        end
        if ka == ARRAY then
            local n = c_len(a, ka)
            if n ~= c_len(b, kb) then
                return false
            end
            for i = 1, n do
                local eq = json_eq(a[i], b[i], depth + 1)
                if eq ~= true then
                    return eq -- false or Fail
                end
            end
            return true
        end
        local keys = object_keys(b)
        if #keys ~= #object_keys(a) then
            return false
        end
        for _, k in ipairs(keys) do
            local x = a[k]
            if rawequal(x, nil) then
                return false
            end
            local eq = json_eq(x, b[k], depth + 1)
            if eq ~= true then
                return eq -- false or Fail
            end
        end
        return true
    end

    --- The child of container `at` that token `tok` names (fails as `text`
    --- when there is none).
    local function child_at(at, tok, text)
        if Fail.unsafe(at) then
            return Fail
        end
        local k = kind_of(at)
        local v
        if k == OBJECT then
            v = at[tok]
        elseif k == ARRAY then
            local i = array_pos(tok, c_len(at, k), false)
            if rawequal(i, Fail) then
                return Fail
            end
            v = at[i + 1]
        end
        if rawequal(v, nil) then
            return fail(format("path %q not found", text))
        end
        return v
    end

    --- The container holding `tokens`' value in `root`, and the last token.
    local function parent_of(root, tokens, text)
        local at = root
        for i = 1, #tokens - 1 do
            at = child_at(at, tokens[i], text)
            if rawequal(at, Fail) then
                return Fail
            end
        end
        return at, tokens[#tokens]
    end

    local function value_at(root, tokens, text)
        if #tokens == 0 then
            return root
        end
        local parent, last = parent_of(root, tokens, text)
        if rawequal(parent, Fail) then
            return Fail
        end
        return child_at(parent, last, text)
    end

    local function op_add(state, tokens, text, v)
        if #tokens == 0 then
            state.root = RAW.plain(v)
            return
        end
        local parent, last = parent_of(state.root, tokens, text)
        if rawequal(parent, Fail) or Fail.unsafe(parent) then
            return Fail
        end
        local k = kind_of(parent)
        if k == OBJECT then
            touch(parent)
            if not is_proxy(parent) then
                v = RAW.plain(v)
            end
            parent[last] = v
        elseif k == ARRAY then
            local i = array_pos(last, c_len(parent, k), true)
            if rawequal(i, Fail) then
                return Fail
            end
            touch(parent)
            arr_insert(parent, i, v)
        else
            return fail(format("path %q: the parent is not a container", text))
        end
    end

    --- Whether object `v` has member `k`, without reading it (a proxy's
    --- member is not made into a Lua value: no string, no cache entry).
    local function has_member(v, k)
        local st = is_proxy(v)
        if not st then
            return not rawequal(v[k], nil)
        end
        local ks = st.ks
        if ks then
            local id = ks[k]
            if id ~= nil and type(k) == "string" then
                return id ~= 0
            end
        end
        if not rawequal(st.cache[k], nil) then
            return true
        end
        return type(k) == "string" and has_orig_key(st, k)
    end

    local function op_remove(state, tokens, text, replacement)
        if #tokens == 0 then
            if rawequal(replacement, nil) then
                return fail("cannot remove the whole document")
            end
            state.root = RAW.plain(replacement)
            return
        end
        local parent, last = parent_of(state.root, tokens, text)
        if rawequal(parent, Fail) or Fail.unsafe(parent) then
            return Fail
        end
        local k = kind_of(parent)
        if k == OBJECT then
            local st = is_proxy(parent)
            if not st or (st.ks and not rawequal(st.ks[last], nil)) or not rawequal(st.cache[last], nil) then
                if not has_member(parent, last) then
                    return fail(format("path %q not found", text))
                end
                touch(parent)
                if not st then
                    replacement = RAW.plain(replacement)
                end
                parent[last] = replacement
            else
                -- An original member or none: the edit itself tells which
                -- (a delete of no member is not found, a set of one adds a
                -- key), so the member is not looked up before it (one
                -- Doc::field per op, not two); the journal undoes the edit
                -- when there was none. On an untouched object the edit makes
                -- its state; a failing op's undo keeps that state, emptied
                -- (journal_close, qjson_edit_reset), for the next edit to
                -- reuse: failing patches do not grow the document.
                touch(parent)
                parent[last] = replacement
                local id = st.ks[last]
                if rawequal(replacement, nil) and id ~= 0 or not rawequal(replacement, nil) and id < 0 then
                    return fail(format("path %q not found", text))
                end
            end
        elseif k == ARRAY then
            local i = array_pos(last, c_len(parent, k), false)
            if rawequal(i, Fail) then
                return Fail
            end
            touch(parent)
            if rawequal(replacement, nil) then
                arr_remove(parent, i)
            else
                arr_replace(parent, i, replacement)
            end
        else
            return fail(format("path %q not found", text))
        end
    end

    local OPS = { add = true, remove = true, replace = true, move = true, copy = true, test = true }

    local function same_tokens(a, b, n)
        for i = 1, n do
            if a[i] ~= b[i] then
                return false
            end
        end
        return true
    end

    local function apply_op(state, op)
        if Fail.unsafe(op) then
            return Fail
        end
        if kind_of(op) ~= OBJECT then
            return fail("an op must be an object")
        end
        local name = op.op
        if type(name) ~= "string" or not OPS[name] then
            if Fail.unsafe(name) then -- (tostring may call its __tostring)
                return Fail
            end
            return fail(format("unknown op %s", tostring(name)))
        end
        local text = op.path
        if rawequal(text, nil) then
            return fail("the op has no \"path\"")
        end
        local tokens = pointer_tokens(text)
        if rawequal(tokens, Fail) then
            return Fail
        end
        local value = op.value
        if (name == "add" or name == "replace" or name == "test") and rawequal(value, nil) then
            return fail(format("a %q op needs a \"value\"", name))
        end
        if name == "add" or name == "replace" then
            local v = own(value, nil, true)
            if rawequal(v, Fail) then
                return Fail
            end
            if name == "add" then
                return op_add(state, tokens, text, v)
            end
            return op_remove(state, tokens, text, v)
        elseif name == "remove" then
            return op_remove(state, tokens, text, nil)
        elseif name == "test" then
            local at = value_at(state.root, tokens, text)
            if rawequal(at, Fail) then
                return Fail
            end
            local eq = json_eq(at, value, 0)
            if rawequal(eq, Fail) then
                return Fail
            elseif not eq then
                return fail(format("test failed: the value at %q differs", text))
            end
        else
            local from_text = op.from
            if rawequal(from_text, nil) then
                return fail(format("a %q op needs a \"from\"", name))
            end
            local from = pointer_tokens(from_text)
            if rawequal(from, Fail) then
                return Fail
            end
            local v = value_at(state.root, from, from_text)
            if rawequal(v, Fail) then
                return Fail
            end
            if name == "copy" then
                v = own(v)
                if rawequal(v, Fail) then
                    return Fail
                end
                return op_add(state, tokens, text, v)
            end
            if #from == #tokens and same_tokens(from, tokens, #from) then
                return
            end
            if #from < #tokens and same_tokens(from, tokens, #from) then
                return fail(format("cannot move %q into its own child %q", from_text, text))
            end
            if rawequal(op_remove(state, from, from_text, nil), Fail) then
                return Fail
            end
            return op_add(state, tokens, text, v)
        end
    end

    --- Apply every op of `ops` in turn (`state.i`: the op being applied);
    --- Fail when one fails. No pcall around it (see Fail): an op's end
    --- returns to this loop, a Lua frame, and its trace joins the loop's.
    --- The loop runs once past the last op and breaks there: a side trace
    --- that ends the last op then reaches the loop's head and joins its
    --- trace, rather than ending at this function's return.
    local function apply_ops(state, ops)
        local n = c_len(ops, ARRAY)
        for i = 1, n + 1 do
            if i > n then
                break
            end
            state.i = i
            if rawequal(apply_op(state, ops[i]), Fail) then
                return Fail
            end
        end
    end

    --- qjson.patch(t, ops) -> t (or the new root when an op replaces it).
    -- The state of the patch being applied, one table for every patch (they
    -- are not re-entered, see journal_open); `root` is dropped at the end.
    local pstate = { root = false, i = 0 }

    --- Whether a patch's or merge patch's walk is on the stack (its
    --- apply_ops or plan_into): only looked at on an error's path, or when a
    --- patch starts while a journal is open. (A field, not a local: the main
    --- chunk is at LuaJIT's 200.)
    Fail.patching = function()
        local lvl = 2
        while true do
            local info = debug.getinfo(lvl, "f")
            if info == nil then
                return false
            end
            local f = info.func
            if f == apply_ops or f == pstate.plan_into then
                return true
            end
            lvl = lvl + 1
        end
    end

    journal_abort = function(from_raise)
        if from_raise then
            if not Fail.bare then
                return
            end
            -- A first run left by an error that did not pass here (out of
            -- memory) leaves Fail.bare set and its journal open: a later
            -- raise() outside that run forgets them (the ops it applied
            -- stay, as documented above) rather than undo unrelated edits.
            if not Fail.patching() then
                Fail.bare, J, pstate.root = false, nil, false
                return
            end
        end
        Fail.bare = false
        if J ~= nil then
            journal_close(true)
            pstate.root = false
        end
    end

    --[[ A JSON Patch given as text, as a plan made once per text: its ops as
    plain tables {op =, path =, value =, from =} read once from the decoded
    text (a proxy's scalar members are not cached, so each use read every
    op's members from the index again: a C call and a string each). Values
    are the cached patch proxy's (never changed: own() puts fresh proxies
    of their bytes into the target). An element that is not an object stays
    as it is, and fails in its turn as before. Nil when the text is not an
    array. Plans are kept as decode_text keeps texts (64 of up to 64 KB). ]]
    local text_ops = (function()
        local plans, planned = {}, 0
        return function(text)
            local plan = plans[text]
            if plan ~= nil then
                return plan
            end
            local ops = decode_text(text)
            if kind_of(ops) ~= ARRAY then
                return nil
            end
            local n = c_len(ops, ARRAY)
            plan = table_new(n, 0)
            for i = 1, n do
                local o = ops[i]
                if is_proxy(o) and kind_of(o) == OBJECT then
                    o = { op = o.op, path = o.path, value = o.value, from = o.from }
                end
                plan[i] = o
            end
            if #text <= 64 * 1024 then
                if planned >= 64 then
                    plans, planned = {}, 0
                end
                plans[text] = plan
                planned = planned + 1
            end
            return plan
        end
    end)()

    function qjson.patch(t, ops)
        if type(ops) == "string" then
            ops = text_ops(ops)
            if ops == nil then
                error(setmetatable({ message = "a JSON Patch is an array of ops" }, PatchError), 2)
            end
        elseif kind_of(ops) ~= ARRAY and not (type(ops) == "table" and next(ops) == nil) then
            error("qjson.patch: ops must be an array of ops or JSON text", 2)
        end
        -- (A journal left open here: a patch running below, whose user
        -- metamethod called this, or one ended by an error outside raise().)
        if J ~= nil and Fail.patching() then
            error("qjson.patch: called while another patch is being applied (not re-entrant)", 2)
        end
        local state = pstate
        state.root, state.i = t, 0
        journal_open()
        -- Without pcall unless the walk meets a table whose metatable may
        -- run user code (see Fail.retry): then what the ops changed so far
        -- is undone and the patch runs again, under one pcall (not one per
        -- op), which undoes the journal on any error and raises it as it
        -- was raised.
        local r
        Fail.bare = true
        if not Fail.unsafe(ops) then
            r = apply_ops(state, ops)
        end
        Fail.bare = false
        if Fail.message == Fail.retry then
            Fail.message = false
            journal_close(true)
            journal_open()
            state.root, state.i = t, 0
            local ok
            ok, r = pcall(apply_ops, state, ops)
            if not ok then
                journal_abort()
                state.root = false
                error(r, 0)
            end
        end
        if rawequal(r, Fail) then
            -- (The failing op's index and message first: the undo may run a
            -- user __newindex that applies a patch of its own, which moves
            -- state.i and Fail.message.)
            local i, msg = state.i, Fail.message
            Fail.message = false
            journal_close(true)
            state.root = false
            error(setmetatable({ message = format("op %d: %s", i - 1, msg), op_index = i - 1 }, PatchError), 2)
        end
        journal_close(false)
        local root = state.root
        state.root = false
        return root
    end

    --- qjson.merge_patch(t, patch) -> t (or the patch, when it is not an object).
    -- Made by a function of its own, with its helpers: their locals would
    -- pass the main chunk's 200 (LuaJIT's limit).
    qjson.merge_patch = (function()
        --- Raise `msg`, undoing what the merge changed.
        local function merge_error(msg)
            journal_abort()
            error("qjson.merge_patch: " .. msg, 0)
        end

        --- own(v), raising when `v` is nested too deeply.
        local function owned(v)
            v = own(v)
            if rawequal(v, Fail) then
                Fail.message = false
                merge_error("value nested too deeply")
            end
            return v
        end

        --- Whether object `v` has a null member, at any depth of objects.
        local function has_null_member(v, depth)
            if depth > MAX_DEPTH then
                merge_error("patch nested too deeply")
            end
            for _, k in ipairs(object_keys(v)) do
                local x = v[k]
                if x == null or (kind_of(x) == OBJECT and has_null_member(x, depth + 1)) then
                    return true
                end
            end
            return false
        end

        local merged_new -- (patch, depth) -> MergePatch({}, patch)

        --- MergePatch({}, object proxy `p` holding a null member) into buffer `b`
        --- as the text Python writes for the dict it builds: its members but the
        --- null ones, compact, in order; keys and scalars in compact form (an
        --- original scalar from its text, so `1.0E2` is `100.0` and an integer
        --- stays exact), an object member holding nulls the same way, any other
        --- container as own() gives it (its original bytes when untouched).
        local function put_merged(b, p, depth)
            if depth > MAX_DEPTH then
                merge_error("patch nested too deeply")
            end
            local st = getmetatable(p)
            local ks = st.ks
            local first = true
            b:put("{")
            for _, k in ipairs(current_keys(st)) do
                local x = p[k]
                if x ~= null then
                    -- A key of printable ASCII but `"` and `\` is written
                    -- as it is (write_str escapes nothing in it); any other
                    -- goes through the core (non-ASCII is checked as UTF-8).
                    if find(k, "[^]-~ !#-[]") then
                        b:put(first and "" or ",", compact_of(k), ":")
                    else
                        b:put(first and '"' or ',"', k, '":')
                    end
                    first = false
                    if is_proxy(x) and kind_of(x) == OBJECT and has_null_member(x, depth + 1) then
                        put_merged(b, x, depth + 1)
                    elseif type(x) == "table" then
                        b:put(qjson.encode(merged_new(x, depth + 1)))
                    elseif ks and ks[k] ~= nil then -- a value set on the patch
                        b:put(compact_of(x))
                    else
                        local rc = C.qjson_field(st.h, st.cur, k, #k, cur_out)
                        if rc == OK then
                            rc = C.qjson_span(st.h, cur_out, "", 0, len_out, len_out + 1)
                        end
                        if rc ~= OK then
                            raise(rc, k, 2)
                        end
                        local a = tonumber(len_out[0])
                        b:put(compact_text(sub(st.s, a + 1, tonumber(len_out[1]))))
                    end
                end
            end
            b:put("}")
        end

        --- MergePatch({}, patch): the patch with its null members dropped (the
        --- patch value itself when it has none, as Python does: a text patch's
        --- value is then written as its original bytes). A proxy with nulls
        --- becomes a proxy of the text Python writes (put_merged); a plain
        --- table, a plain table (its order is Lua's).
        merged_new = function(patch, depth)
            if kind_of(patch) ~= OBJECT or not has_null_member(patch, depth) then
                return owned(patch)
            end
            if is_proxy(patch) then
                local b = buffer.new()
                put_merged(b, patch, depth)
                return (qjson.decode(b:tostring()))
            end
            local out = {}
            for _, k in ipairs(object_keys(patch)) do
                local x = patch[k]
                if x ~= null then
                    out[k] = merged_new(x, depth + 1)
                end
            end
            return out
        end

        --- Merge `patch` into object `target`. A member that deletes is deleted
        --- without reading its value (no Lua string, no cache entry): on a
        --- proxy directly, the delete itself telling whether it was there
        --- (none: nothing changes, no dirty flag), one Doc::field where
        --- has_member and then the delete made two (the edit state it may
        --- make on an untouched object is kept, emptied on undo, for the
        --- object's next edit); and a member that is not an object replaces without reading the
        --- target's (only an object patch member merges into what is there).
        local function merge_into(target, patch, depth)
            if depth > MAX_DEPTH then
                merge_error("patch nested too deeply")
            end
            for _, k in ipairs(object_keys(patch)) do
                local x = patch[k]
                if x == null then
                    -- (drop: a proxy is edited directly, see merge_into)
                    if is_proxy(target) or target[k] ~= nil then
                        touch(target)
                        target[k] = nil
                    end
                else
                    local cur = kind_of(x) == OBJECT and target[k]
                    if cur and kind_of(cur) == OBJECT then
                        merge_into(cur, x, depth + 1)
                    else
                        touch(target)
                        target[k] = merged_new(x, depth + 1)
                    end
                end
            end
        end

        --[[ A merge patch given as JSON text, as a plan made once per text (a
        gateway applies the same few patches to every request): the patch
        object's members as a flat list of (key, value, sub) triples, where sub
        is the plan of an object value (false for other values), and `nulls`:
        whether a null member lies at some depth of objects (then MergePatch({},
        value) is not the value itself). Applying a plan reads no member of the
        patch: a proxy's scalar members are not cached, and each read was a
        lookup in the patch's index (qjson_field_value) on every merge. The
        values are the cached patch proxy's (see decode_text), never changed;
        own() puts fresh proxies of their bytes into the target. The depth
        check is made here, once: a plan is as deep as its patch's objects. ]]
        local function merge_plan(patch, depth)
            if depth > MAX_DEPTH then
                merge_error("patch nested too deeply")
            end
            local keys = object_keys(patch)
            local plan = table_new(3 * #keys, 2)
            local nulls = false
            for i = 1, #keys do
                local k = keys[i]
                local x = patch[k]
                local sub = false
                if x == null then
                    nulls = true
                elseif kind_of(x) == OBJECT then
                    sub = merge_plan(x, depth + 1)
                    nulls = nulls or sub.nulls
                end
                plan[3 * i - 2], plan[3 * i - 1], plan[3 * i] = k, x, sub
            end
            plan.value, plan.nulls = patch, nulls
            return plan
        end

        --- The plan's object as a value: its proxy (of the cached patch
        --- text), or with nulls a proxy of the text put_merged writes (made
        --- once per plan).
        local function plan_value(plan)
            if not plan.nulls then
                return plan.value
            end
            local text = plan.text
            if not text then
                local b = buffer.new()
                put_merged(b, plan.value, 0)
                text = b:tostring()
                plan.text = text
            end
            return (decode_text(text))
        end

        --- MergePatch({}, the plan's object), as merged_new: a fresh proxy of
        --- plan_value. `rec`: for a proxy target, the plan's record of that
        --- value instead (made once per plan: the value is a proxy of a
        --- cached text, which never changes; see RAW), written as its bytes
        --- and read back as the fresh proxy (a 2 KB merge made a proxy
        --- state, its table and its cursor per new object member put).
        local function plan_new(plan, rec)
            if rec then
                local r = plan.rec
                if r == nil then
                    local v = plan_value(plan)
                    local st = is_proxy(v)
                    r = false
                    if st and not st.dirty then
                        r = setmetatable({ c = v, text = qjson.encode(v), proxy = true }, RAW)
                    end
                    plan.rec = r
                end
                if r then
                    return r
                end
            end
            return (owned(plan_value(plan)))
        end

        --- Merge the plan into object `target`, as merge_into.
        local function plan_into(target, plan)
            for i = 1, #plan, 3 do
                local k, x, sub = plan[i], plan[i + 1], plan[i + 2]
                if x == null then
                    -- (drop: a proxy is edited directly, see merge_into)
                    if is_proxy(target) or target[k] ~= nil then
                        touch(target)
                        target[k] = nil
                    end
                else
                    local cur = sub and target[k]
                    if cur and kind_of(cur) == OBJECT then
                        plan_into(cur, sub)
                    else
                        touch(target)
                        if sub then
                            target[k] = plan_new(sub, is_proxy(target) ~= nil)
                        else
                            target[k] = owned(x)
                        end
                    end
                end
            end
        end

        -- The plans of the merge patch texts seen, by text, and at [0] their
        -- count; bounded
        -- as decode_text's cache: 64 texts of up to 64 KB. A text that is not
        -- an object has none.
        local plan_cache = { [0] = 0 }

        pstate.plan_into = plan_into

        return function(t, patch)
            if J ~= nil and Fail.patching() then
                error("qjson.merge_patch: called while another patch is being applied (not re-entrant)", 2)
            end
            Fail.bare = false -- (left set only by an error outside raise())
            if type(patch) == "string" then
                local plan = plan_cache[patch]
                if plan == nil then
                    local v = decode_text(patch)
                    if kind_of(v) ~= OBJECT then
                        return owned(v)
                    end
                    plan = merge_plan(v, 0)
                    if #patch <= 64 * 1024 then
                        if plan_cache[0] >= 64 then
                            plan_cache = { [0] = 0 }
                        end
                        plan_cache[patch] = plan
                        plan_cache[0] = plan_cache[0] + 1
                    end
                end
                if kind_of(t) ~= OBJECT then
                    return plan_new(plan)
                end
                -- (Still under pcall, unlike qjson.patch: without it the
                -- 2 KB merge counted 27.3k instructions per op (seeds 0-3),
                -- with it 25.7k, against main's 22.7k: this file's layout
                -- moves the trace draw more than the pcall does. Its errors
                -- undo the journal themselves, see merge_error.)
                journal_open()
                local ok, err = pcall(plan_into, t, plan)
                journal_close(not ok)
                if not ok then
                    error(err, 0)
                end
                return t
            end
            if kind_of(patch) ~= OBJECT then
                return owned(patch)
            end
            if kind_of(t) ~= OBJECT then
                return merged_new(patch, 0)
            end
            journal_open()
            local ok, err = pcall(merge_into, t, patch, 0)
            journal_close(not ok)
            if not ok then
                error(err, 0)
            end
            return t
        end
    end)()

    --- The steps of a number path: a JSON Pointer, or dotted keys with [i]
    --- indices (negative from the end) and ["quoted"] keys.
    local function number_path(p)
        if p:sub(1, 1) == "/" then
            local tokens = pointer_tokens(p)
            if tokens == Fail then
                Fail.message = false
                error("qjson: invalid path " .. format("%q", p), 3)
            end
            return tokens, true
        end
        local steps, pos = {}, 1
        while pos <= #p do
            local c = p:sub(pos, pos)
            if c == "[" then
                local q = p:match('^%["([^"\\]*)"%]', pos)
                if q then
                    steps[#steps + 1] = q
                    pos = pos + #q + 4
                else
                    local d = p:match("^%[(%-?%d+)%]", pos)
                    if not d then
                        error("qjson: invalid path " .. format("%q", p), 3)
                    end
                    steps[#steps + 1] = tonumber(d)
                    pos = pos + #d + 2
                end
            else
                if c == "." then
                    if pos == 1 then
                        error("qjson: invalid path " .. format("%q", p), 3)
                    end
                    pos = pos + 1
                end
                local key = p:match("^[^%.%[]+", pos)
                if not key then
                    error("qjson: invalid path " .. format("%q", p), 3)
                end
                steps[#steps + 1] = key
                pos = pos + #key
            end
        end
        return steps, false
    end

    local function number_op(t, path, by, mul)
        if type(by) ~= "number" then
            error("qjson: the operand must be a number, got " .. type(by), 3)
        end
        if type(path) ~= "string" or path == "" then
            error("qjson: incr / mul need the path of a number inside the document", 3)
        end
        local steps, pointer = number_path(path)
        local at, slot, k = t, nil, nil
        for i = 1, #steps do
            k = kind_of(at)
            local s = steps[i]
            if k == ARRAY then
                local n = c_len(at, k)
                if pointer then
                    local pos = array_pos(s, n, false)
                    s = pos ~= Fail and pos or nil
                elseif type(s) == "number" then
                    s = s < 0 and s + n or s
                    s = (s >= 0 and s < n) and s or nil
                else
                    s = nil
                end
                s = s and s + 1
            elseif k ~= OBJECT or type(s) ~= "string" then
                s = nil
            end
            local v = s ~= nil and at[s] or nil
            if v == nil then
                error(format("qjson: path %q not found", path), 3)
            end
            if i == #steps then
                slot = s
                if type(v) ~= "number" then
                    error(format("qjson: the value at %q is not a number", path), 3)
                end
                local new = mul and v * by or v + by
                if k == ARRAY then
                    arr_replace(at, slot - 1, new)
                else
                    at[slot] = new
                end
                return new
            end
            at = v
        end
    end

    --- qjson.incr(t, path [, by = 1]) -> the new number (ReJSON NUMINCRBY).
    function qjson.incr(t, path, by)
        return number_op(t, path, by == nil and 1 or by, false)
    end

    --- qjson.mul(t, path, by) -> the new number (ReJSON NUMMULTBY).
    function qjson.mul(t, path, by)
        return number_op(t, path, by, true)
    end

end

-- ---------------------------------------------------------------- many documents

-- A block, as the patches section.
do

    local many_out = ffi.typeof("qjson_many *[1]")
    local many_index = ffi.typeof("uint64_t[1]")
    local ERR_JSON = 5 -- QJSON_ERR_JSON

    --- The options of parse_many / open_many: skip mode and qjson_options (or nil).
    local MANY_OPTIONS = { lazy = true, max_depth = true, errors = true }
    local OPEN_OPTIONS = { lazy = true, max_depth = true, errors = true, chunk_size = true }
    local function many_options(name, opts, allowed)
        if opts == nil then
            return false, nil
        end
        local o = OPTIONS.read(name, opts, allowed, ffi_new("qjson_options"), 3)
        if opts.errors ~= nil and opts.errors ~= "raise" and opts.errors ~= "skip" then
            error(name .. ': errors must be "raise" or "skip"', 3)
        end
        return opts.errors == "skip", o
    end

    -- A document of a parse_many / open_many stream failed: raise at the
    -- iterator's caller, or (errors = "skip", a JSON error) record it.
    local function many_failed(it, skip, r, msg, off, i)
        if not skip or r ~= ERR_JSON then
            error(format("qjson: %s (document %d, byte %d)", msg, i, off), 3)
        end
        local errs = it.errors
        errs[#errs + 1] = { message = msg, offset = off, doc_index = i }
    end

    --[[ qjson.parse_many(s [, {lazy = bool, max_depth = n, errors = "raise" | "skip"}])
        -> an iterator of Docs over the documents of `s` (NDJSON / JSON Lines, or
        JSON texts separated by any whitespace), usable in a generic for:
            for doc in qjson.parse_many(s) do ... end
        A bad document raises "qjson: <message> (document i, byte n)"; with
        errors = "skip" it is skipped and recorded in the iterator's `errors`
        table as {message =, offset =, doc_index =} (offset into s, 0-based
        doc_index). Each Doc pins s and has its own index. ]]
    function qjson.parse_many(s, opts)
        if type(s) ~= "string" then
            error("qjson.parse_many: expected a string, got " .. type(s), 2)
        end
        local skip, o = many_options("qjson.parse_many", opts, MANY_OPTIONS)
        local mo = many_out()
        local rc = C.qjson_many_new(s, #s, o, mo)
        if rc ~= OK then
            raise(rc, nil, 2)
        end
        local m = ffi_gc(mo[0], C.qjson_many_free)
        local idx = many_index()
        local start = ffi_new("size_t[1]")
        local dout = ffi_new("qjson_doc *[1]")
        local base = ffi.cast(charp_t, s)
        -- The handle borrows s: the registry pins it (cursors share the
        -- handle). `_s` is a pointer to the document's first byte, which is
        -- all Doc:raw needs of it (no copy of the line).
        local it = { errors = {} }
        local function step()
            while true do
                local r = C.qjson_many_next(m, dout, idx, start)
                if r == OK then
                    local h = adopt(dout[0], s)
                    return (setmetatable({ _h = h, _s = base + start[0] }, Doc))
                elseif r == END then
                    return nil
                end
                local msg, _, off = last_error()
                many_failed(it, skip, r, msg, off, tonumber(idx[0]))
            end
        end
        return setmetatable(it, { __call = step })
    end

    --[[ qjson.open_many(file [, opts]) -> the iterator of parse_many over a
        file read in chunks: `file` is a path or an open file (anything with a
        read(n) method returning a string, or nil at the end); opts as
        parse_many's plus chunk_size (bytes read at a time, default 1 MiB).
        Memory stays bounded by the chunk size plus the largest document (a
        document longer than a chunk is carried into the next read, which
        grows to its size): each Doc pins the window (carried bytes + chunk)
        it was read in, not the file. Error offsets count in the whole file. A
        file opened from a path is closed at the end of the iteration. ]]
    function qjson.open_many(file, opts)
        local fh, owned
        if type(file) == "string" then
            local f, err = io.open(file, "rb")
            if not f then
                error("qjson.open_many: " .. tostring(err), 2)
            end
            fh, owned = f, true
        elseif (type(file) == "table" or type(file) == "userdata") and file.read then
            fh = file
        else
            error("qjson.open_many: expected a path or a file, got " .. type(file), 2)
        end
        local skip, o = many_options("qjson.open_many", opts, OPEN_OPTIONS)
        local chunk = opts and opts.chunk_size or 1048576
        if type(chunk) ~= "number" or chunk < 1 or chunk ~= floor(chunk) then
            error("qjson.open_many: chunk_size must be a positive integer", 2)
        end
        local mo = many_out()
        local rc = C.qjson_many_stream(o, chunk, mo)
        if rc ~= OK then
            raise(rc, nil, 2)
        end
        local m = ffi_gc(mo[0], C.qjson_many_free)
        local idx = many_index()
        local start = ffi_new("size_t[1]")
        local dout = ffi_new("qjson_doc *[1]")
        -- The current window (a Lua string the stream borrows; the registry
        -- pins it for the handles cut from it) and its stream offset.
        local win, at, eof = "", 0, false
        local ptr = ffi.cast(charp_t, win)
        local function refill()
            local used = tonumber(C.qjson_many_consumed(m))
            local rest = win:sub(used + 1)
            at = at + used
            local data = fh:read(chunk > #rest and chunk or #rest)
            if data == nil or data == "" then
                eof = true
                data = ""
                if owned then
                    fh:close()
                end
            elseif type(data) ~= "string" then
                error("qjson.open_many: read() returned a " .. type(data), 3)
            end
            local w = rest .. data
            win, ptr = w, ffi.cast(charp_t, w)
            local r = C.qjson_many_window(m, w, #w, eof and 1 or 0)
            if r ~= OK then
                raise(r, nil, 3)
            end
        end
        local it = { errors = {} }
        local function step()
            while true do
                local r = C.qjson_many_next(m, dout, idx, start)
                if r == OK then
                    local h = adopt(dout[0], win)
                    return (setmetatable({ _h = h, _s = ptr + start[0] }, Doc))
                elseif r == END then
                    if eof then
                        return nil
                    end
                    refill()
                else
                    local msg, _, off = last_error()
                    local i = tonumber(idx[0])
                    -- The offset (also in the message) counts in the window.
                    msg = gsub(msg, " at byte %d+$", " at byte " .. (off + at))
                    off = off + at
                    many_failed(it, skip, r, msg, off, i)
                end
            end
        end
        return setmetatable(it, { __call = step })
    end

end

return qjson
