//! Hardening: the 4 GiB boundary, and the C ABI's panic barrier.
//!
//! The 4 GiB inputs are zeroed allocations (`alloc_zeroed`, like
//! `vec![0u8; n]`): the allocator gets them zeroed from the OS (calloc /
//! fresh mmap) and never touches a page, and the length check comes before
//! any read, so these tests cost no RAM. Where the OS refuses to reserve
//! 4 GiB (a small machine with strict overcommit), the test says so and
//! returns instead of aborting the test binary.

use qjson::capi::{self, CCursor, Handle};
use qjson::{ErrorKind, Index, Options};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ffi::{c_int, CStr};
use std::ptr::{null, null_mut};

const PANIC: c_int = 7;
const JSON: c_int = 5;
const OK: c_int = 0;

fn last_error() -> (c_int, usize, String) {
    let mut status = -1;
    let mut offset = 0usize;
    // SAFETY: valid out-pointers; the message is copied at once.
    let msg = unsafe { CStr::from_ptr(capi::qjson_last_error(&mut status, &mut offset)) };
    (status, offset, msg.to_string_lossy().into_owned())
}

/// `len` zeroed bytes, or `None` when the OS will not reserve them.
struct Zeroed {
    ptr: *mut u8,
    layout: Layout,
}

impl Zeroed {
    fn new(len: usize) -> Option<Zeroed> {
        let layout = Layout::array::<u8>(len).ok()?;
        // SAFETY: `layout` has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        (!ptr.is_null()).then_some(Zeroed { ptr, layout })
    }

    fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` is a live allocation of `layout.size()` zeroed
        // (initialised) bytes, owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }
}

impl Drop for Zeroed {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { dealloc(self.ptr, self.layout) };
    }
}

#[test]
fn inputs_of_4_gib_or_more_are_too_large() {
    for len in [1usize << 32, u32::MAX as usize] {
        let Some(zeroed) = Zeroed::new(len) else {
            eprintln!("skipped: the OS would not reserve {len} bytes");
            return;
        };
        let big = zeroed.as_slice();
        for lazy in [false, true] {
            let opts = Options {
                lazy,
                ..Options::default()
            };
            let e = Index::build(big, &opts).unwrap_err();
            assert_eq!(e.kind, ErrorKind::TooLarge, "len {len}");
            assert!(e.to_string().contains("too large"), "{e}");
        }
        // The C ABI says the same, with QJSON_ERR_JSON.
        let mut h: *mut Handle = null_mut();
        // SAFETY: `big` is readable for its length; `h` is a valid local.
        let rc = unsafe { capi::qjson_parse(big.as_ptr().cast(), big.len(), null(), &mut h) };
        assert_eq!(rc, JSON);
        assert!(h.is_null());
        let (status, _, msg) = last_error();
        assert_eq!(status, JSON);
        assert!(msg.contains("too large"), "{msg}");
    }
}

/// A cursor is plain data a C caller may make up. A forged one must not be
/// able to corrupt memory: the reads are bounds-checked, and the panic that
/// follows is caught at the boundary and returned as QJSON_ERR_PANIC.
#[test]
fn a_panic_inside_the_c_abi_is_a_status_not_an_unwind() {
    let text = b"{\"a\": [1, 2]}";
    let mut h: *mut Handle = null_mut();
    // SAFETY: `text` outlives the handle (freed below); `h` is a valid local.
    let rc = unsafe { capi::qjson_parse(text.as_ptr().cast(), text.len(), null(), &mut h) };
    assert_eq!(rc, OK);
    // An object at byte 0 (right), whose container ordinal is out of range.
    let forged = CCursor {
        start: 0,
        sidx: 0,
        ord: 1_000_000,
        kind: 1,
    };
    let mut n = 0usize;
    // Keep the default hook from printing the (expected) panic.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    // SAFETY: live handle and valid pointers; the cursor breaks the
    // contract on purpose, which must end in a status, not UB.
    let rc = unsafe { capi::qjson_len(h, &forged, null(), 0, &mut n) };
    let mut out = CCursor::default();
    // SAFETY: as above.
    let rc2 = unsafe { capi::qjson_find(h, &forged, c"a".as_ptr(), 1, &mut out) };
    std::panic::set_hook(hook);
    assert_eq!(rc, PANIC);
    assert_eq!(rc2, PANIC);
    let (status, _, msg) = last_error();
    assert_eq!(status, PANIC);
    assert!(msg.starts_with("internal error (panic)"), "{msg}");
    // The handle is still usable after a caught panic.
    // SAFETY: as above, with the root (NULL) cursor.
    let rc = unsafe { capi::qjson_len(h, null(), c"a".as_ptr(), 1, &mut n) };
    assert_eq!((rc, n), (OK, 2));
    // SAFETY: freed once.
    unsafe { capi::qjson_free(h) };
}
