//! The C ABI: the core's reads for LuaJIT's FFI and other C callers. The
//! header it mirrors is `include/qjson.h`; `python/qjson/qjson.lua` carries
//! the same declarations as its `ffi.cdef` (a test keeps the three in step).
//!
//! The model:
//!
//! - `qjson_parse` builds a [`Handle`]: the index, owned, plus a *borrowed*
//!   pointer to the input. The caller keeps the input alive and unchanged
//!   until `qjson_free` (the Lua side pins the Lua string in the document
//!   object and frees the handle from an `ffi.gc` finaliser).
//! - Values are named by `qjson_cursor`, plain data (the core [`Cursor`] plus
//!   the value's type), so callers keep cursors without allocating. Every
//!   read takes a base cursor (`NULL` for the root) and a path relative to
//!   it (length-delimited, same syntax as in Python; `""` is the base).
//! - Every function returns a status code (`QJSON_OK` = 0); results go to
//!   out-parameters. On failure the code, a byte offset and a message are
//!   kept per thread for `qjson_last_error`.
//! - Strings come back as pointer + length: into the input when the JSON
//!   string has no escapes (zero copy), otherwise into a per-thread buffer
//!   valid until the next call on the same thread.
//! - Every export is a panic barrier: a panic becomes `QJSON_ERR_PANIC`,
//!   never an unwind across the C boundary.
//!
//! [`Cursor`]: crate::doc::Cursor

mod child;
mod copy;
mod edit;
mod encode;
mod handle;
mod iter;
mod many;
mod paths;
mod read;
mod status;

pub use child::{qjson_field_value, qjson_index_value, CValue};
pub use copy::qjson_copy;
pub use edit::{
    qjson_edit_changed, qjson_edit_delete, qjson_edit_free, qjson_edit_insert, qjson_edit_len,
    qjson_edit_new, qjson_edit_new_owned, qjson_edit_plan, qjson_edit_put, qjson_edit_remove,
    qjson_edit_restore, qjson_edit_save, qjson_edit_set, qjson_edit_slot, Edit, Seg,
};
pub use encode::{qjson_cjson_escape, qjson_cjson_string};
pub use handle::{qjson_free, qjson_memory, qjson_parse, qjson_parse_root, Handle, Options};
pub use iter::{qjson_iter_init, qjson_iter_next, Iter};
pub use many::{qjson_many_free, qjson_many_new, qjson_many_next, Many};
pub use paths::{
    qjson_get_all, qjson_path_find, qjson_path_free, qjson_path_get_all, qjson_path_new,
};
pub use read::{
    qjson_field, qjson_find, qjson_get_bool, qjson_get_f64, qjson_get_i64, qjson_get_null,
    qjson_get_str, qjson_index, qjson_len, qjson_span, qjson_typeof, CCursor,
};
pub use status::{qjson_backend, qjson_last_error, qjson_version, Status};
