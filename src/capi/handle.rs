//! The document handle: `qjson_parse` and `qjson_free`.

use super::edit::Owned;
use super::read::CCursor;
use super::status::{guard, Fail, Status};
use crate::document::Document;
use crate::index::{self, Index};
use std::ffi::{c_char, c_int};

/// Parse options (`qjson_options`); a null pointer means the defaults.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Nonzero: check only structure and depth; value errors surface when
    /// the value is read.
    pub lazy: c_int,
    /// Maximum container nesting; 0 means the default (1024).
    pub max_depth: u32,
}

/// The input of a C-ABI document: `len` bytes at `ptr`, borrowed. The
/// caller of `qjson_parse` (or of `qjson_many_next`) keeps them alive and
/// unchanged until `qjson_free`. It also owns the edit states made with
/// `qjson_edit_new_owned` for the document, which are freed with it (one
/// finaliser per document on the host's side, not one per edited
/// container).
#[derive(Debug)]
pub struct Borrowed {
    ptr: *const u8,
    len: usize,
    pub(crate) edits: Owned,
}

impl Borrowed {
    /// Borrow `bytes` past their lifetime.
    ///
    /// # Safety
    /// The bytes must stay alive and unchanged for as long as the result
    /// (and every document holding it) lives.
    unsafe fn new(bytes: &[u8]) -> Borrowed {
        Borrowed {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
            edits: Owned::default(),
        }
    }
}

impl AsRef<[u8]> for Borrowed {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `Borrowed::new`'s contract keeps the `len` bytes at `ptr`
        // alive and unchanged for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// A parsed document (`qjson_doc`): the core [`Document`] over borrowed
/// input, with its index and child tables owned. Plain reads never mutate
/// it; the child tables are behind a mutex, so a handle may be read from
/// several threads.
pub type Handle = Document<Borrowed>;

/// The core options from `qjson_options` (null: the defaults).
pub(crate) fn options(o: Option<Options>) -> index::Options {
    let mut options = index::Options::default();
    if let Some(o) = o {
        options.lazy = o.lazy != 0;
        if o.max_depth != 0 {
            options.max_depth = o.max_depth as usize;
        }
    }
    options
}

impl Handle {
    /// A document over `input` and its index. The input is borrowed, not
    /// copied.
    ///
    /// # Safety
    /// `input` must stay alive and unchanged until the handle is freed.
    pub(crate) unsafe fn borrowing(input: &[u8], index: Index) -> Handle {
        // SAFETY: the caller keeps `input` alive and unchanged for as long
        // as the handle lives (this function's contract).
        Document::new(unsafe { Borrowed::new(input) }, index)
    }
}

/// The handle behind a pointer from C, or an `Arg` failure for null.
///
/// # Safety
/// `h` is null or a pointer returned by `qjson_parse` and not yet freed.
#[inline]
pub(crate) unsafe fn handle<'h>(h: *const Handle) -> Result<&'h Handle, Fail> {
    // SAFETY: per this function's contract, a non-null `h` points to a live
    // `Handle` (`as_ref` handles null).
    unsafe { h.as_ref() }.ok_or(Fail::Arg("null document"))
}

/// Index `len` bytes at `input` and store a new document in `*out`. The
/// input is borrowed, not copied: it must stay alive and unchanged until
/// `qjson_free`.
///
/// # Safety
/// `input` points to `len` readable bytes (or `len` is 0), `opts` is null or
/// valid, and `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn qjson_parse(
    input: *const c_char,
    len: usize,
    opts: *const Options,
    out: *mut *mut Handle,
) -> c_int {
    guard(|| {
        if out.is_null() {
            return Err(Fail::Arg("null out pointer"));
        }
        // SAFETY: the caller passes null or a valid `qjson_options`.
        let options = options(unsafe { opts.as_ref() }.copied());
        let bytes: &[u8] = if len == 0 {
            &[]
        } else if input.is_null() {
            return Err(Fail::Arg("null input"));
        } else {
            // SAFETY: per the contract, `input` points to `len` readable bytes.
            unsafe { std::slice::from_raw_parts(input.cast::<u8>(), len) }
        };
        let index = Index::build(bytes, &options)?;
        // SAFETY: per the contract, the caller keeps the input alive and
        // unchanged until `qjson_free` destroys the handle.
        let h = Box::new(unsafe { Handle::borrowing(bytes, index) });
        // SAFETY: `out` is non-null and, per the contract, writable.
        unsafe { *out = Box::into_raw(h) };
        Ok(Status::Ok)
    })
}

/// `qjson_parse`, then the root's cursor into `*root` and the document's
/// heap bytes (as `qjson_memory`) into `*memory`: one call for a host that
/// wraps the root at once (qjson.lua's `decode`). On failure nothing is
/// stored and no document is made.
///
/// # Safety
/// As `qjson_parse`; `root` and `memory` are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn qjson_parse_root(
    input: *const c_char,
    len: usize,
    opts: *const Options,
    out: *mut *mut Handle,
    root: *mut CCursor,
    memory: *mut usize,
) -> c_int {
    if root.is_null() || memory.is_null() {
        return guard(|| Err(Fail::Arg("null out pointer")));
    }
    // SAFETY: forwarded from this function's contract.
    let rc = unsafe { qjson_parse(input, len, opts, out) };
    if rc != Status::Ok as c_int {
        return rc;
    }
    let rc = guard(|| {
        // SAFETY: `qjson_parse` succeeded, so `*out` holds a live handle.
        let h = unsafe { &**out };
        let d = h.doc();
        let c = CCursor::new(&d, d.root());
        // SAFETY: both non-null (checked above) and writable per the contract.
        unsafe {
            root.write(c);
            memory.write(h.index.heap_bytes());
        }
        Ok(Status::Ok)
    });
    if rc != Status::Ok as c_int {
        // Only a panic gets here: no document is made after all.
        // SAFETY: `*out` is the live handle made above, freed once here.
        unsafe {
            qjson_free(*out);
            *out = std::ptr::null_mut();
        }
    }
    rc
}

/// Bytes of heap the document holds (its index), for callers whose garbage
/// collector should account for it (qjson.lua paces LuaJIT's GC with it).
/// 0 for null.
///
/// # Safety
/// `doc` is null or a live pointer from `qjson_parse`.
#[no_mangle]
pub unsafe extern "C" fn qjson_memory(doc: *const Handle) -> usize {
    // SAFETY: per the contract, `doc` is null or live.
    match unsafe { doc.as_ref() } {
        Some(h) => std::panic::catch_unwind(|| h.index.heap_bytes()).unwrap_or(0),
        None => 0,
    }
}

/// Destroy a document from `qjson_parse` (null is ignored). Cursors and
/// iterators taken from it must not be used afterwards.
///
/// # Safety
/// `doc` is null or a pointer returned by `qjson_parse`, freed only once.
#[no_mangle]
pub unsafe extern "C" fn qjson_free(doc: *mut Handle) {
    if !doc.is_null() {
        // SAFETY: per the contract, `doc` came from `Box::into_raw` in
        // `qjson_parse` and is freed once. Dropping an `Index` does not
        // panic, but stay behind a barrier all the same.
        let _ = std::panic::catch_unwind(|| drop(unsafe { Box::from_raw(doc) }));
    }
}
