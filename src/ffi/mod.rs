//! The C ABI (for LuaJIT's FFI and other C callers). (Being written: issue
//! "the same core in LuaJIT".)
