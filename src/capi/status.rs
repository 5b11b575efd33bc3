//! Status codes, the per-thread last error, and the panic barrier every
//! export runs inside.

use crate::error::{AccessError, Error};
use std::cell::RefCell;
use std::ffi::{c_char, c_int};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The status codes of `include/qjson.h`.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok = 0,
    /// `qjson_iter_next`: no more children.
    End = 1,
    /// A well-formed path that names nothing.
    NotFound = 2,
    /// A typed getter met another type (or `len` a scalar).
    Type = 3,
    /// A malformed path.
    Path = 4,
    /// Invalid JSON (at parse time, or met while reading in lazy mode).
    Json = 5,
    /// A null pointer where one is required, or a bad option.
    Arg = 6,
    /// A bug: a Rust panic caught at the boundary.
    Panic = 7,
}

/// Why a call failed, before it is turned into a status and a message.
#[derive(Debug)]
pub(crate) enum Fail {
    Access(AccessError),
    Json(Error),
    Arg(&'static str),
    Panic(String),
}

impl From<AccessError> for Fail {
    fn from(e: AccessError) -> Self {
        Fail::Access(e)
    }
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail::Json(e)
    }
}

impl Fail {
    fn status(&self) -> Status {
        match self {
            Fail::Access(AccessError::NotFound { .. }) => Status::NotFound,
            Fail::Access(AccessError::Type { .. }) => Status::Type,
            Fail::Access(AccessError::PathSyntax { .. }) => Status::Path,
            Fail::Access(AccessError::Decode(_)) | Fail::Json(_) => Status::Json,
            Fail::Arg(_) => Status::Arg,
            Fail::Panic(_) => Status::Panic,
        }
    }

    /// The offset reported with the error: into the input for JSON errors,
    /// into the path for path errors, 0 otherwise.
    fn offset(&self) -> usize {
        match self {
            Fail::Access(AccessError::Decode(e)) | Fail::Json(e) => e.offset,
            Fail::Access(AccessError::NotFound { at })
            | Fail::Access(AccessError::PathSyntax { at, .. }) => *at,
            _ => 0,
        }
    }

    fn message(&self) -> String {
        match self {
            Fail::Access(e) => e.to_string(),
            Fail::Json(e) => e.to_string(),
            Fail::Arg(m) => format!("invalid argument: {m}"),
            Fail::Panic(m) => format!("internal error (panic): {m}"),
        }
    }
}

/// The last failure on this thread. The message is formatted only when
/// asked for: a missing path is an ordinary answer for Lua (`nil`) and
/// costs no allocation.
struct LastError {
    fail: Option<Fail>,
    /// The formatted message, NUL-terminated, once asked for.
    message: Vec<u8>,
}

thread_local! {
    static LAST: RefCell<LastError> = const {
        RefCell::new(LastError { fail: None, message: Vec::new() })
    };
}

#[cold]
fn record(fail: Fail) -> c_int {
    let status = fail.status();
    // Outside the panic barrier: nothing here may panic (a thread-local
    // already torn down at thread exit just loses the message).
    let _ = LAST.try_with(|l| {
        if let Ok(mut l) = l.try_borrow_mut() {
            l.fail = Some(fail);
            l.message.clear();
        }
    });
    status as c_int
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}

/// Run `f` behind a panic barrier; failures are recorded for
/// `qjson_last_error` and turned into their status code.
#[inline]
pub(crate) fn guard(f: impl FnOnce() -> Result<Status, Fail>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(status)) => status as c_int,
        Ok(Err(fail)) => record(fail),
        Err(p) => record(Fail::Panic(panic_message(&*p))),
    }
}

/// The last error on this thread: returns its message (NUL-terminated,
/// valid until the next failing call on this thread) and stores its status
/// and offset in `status` / `offset` when they are not null. With no error
/// yet, the message is empty and the status `QJSON_OK`.
///
/// # Safety
/// `status` and `offset` are null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn qjson_last_error(status: *mut c_int, offset: *mut usize) -> *const c_char {
    let r = catch_unwind(|| {
        LAST.with(|l| {
            let mut l = l.borrow_mut();
            let (code, off) = match &l.fail {
                Some(f) => (f.status() as c_int, f.offset()),
                None => (Status::Ok as c_int, 0),
            };
            if l.message.is_empty() {
                let mut m = l.fail.as_ref().map(Fail::message).unwrap_or_default();
                m.retain(|c| c != '\0');
                l.message = m.into_bytes();
                l.message.push(0);
            }
            if !status.is_null() {
                // SAFETY: the caller passes null or a valid, writable `int`.
                unsafe { *status = code };
            }
            if !offset.is_null() {
                // SAFETY: the caller passes null or a valid, writable `size_t`.
                unsafe { *offset = off };
            }
            // The buffer stays in the thread-local until the next `record`.
            l.message.as_ptr().cast::<c_char>()
        })
    });
    r.unwrap_or(c"internal error (panic) in qjson_last_error".as_ptr())
}

/// The library version, e.g. `"0.1.0"` (static, NUL-terminated).
#[no_mangle]
pub extern "C" fn qjson_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The scan backend in use: `"avx512"`, `"avx2"`, `"neon"` or `"scalar"`
/// (static, NUL-terminated).
#[no_mangle]
pub extern "C" fn qjson_backend() -> *const c_char {
    use crate::scan::Backend;
    match catch_unwind(crate::scan::active_backend) {
        Ok(Backend::Avx512) => c"avx512".as_ptr(),
        Ok(Backend::Avx2) => c"avx2".as_ptr(),
        Ok(Backend::Neon) => c"neon".as_ptr(),
        Ok(Backend::Scalar) => c"scalar".as_ptr(),
        Err(_) => c"unknown".as_ptr(),
    }
}
