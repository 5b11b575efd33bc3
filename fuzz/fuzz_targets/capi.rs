//! The C ABI driven by arbitrary sequences of parse / find / field / index /
//! typed getters / span / iterate / free, the way a C or LuaJIT caller
//! would use it (through the `extern "C"` functions, with raw pointers).
//!
//! Checks:
//! - every call returns a known status and never `QJSON_ERR_PANIC` for
//!   cursors the library handed out; out-values are readable (strings are
//!   copied out at once, so ASan sees any bad pointer);
//! - the C ABI agrees with the core `Doc` on every read (find, type, len,
//!   span);
//! - `qjson_last_error` after a failure has the failing status and an
//!   offset within bounds; NULL arguments give `QJSON_ERR_ARG`;
//! - forged cursors (plain data a caller may make up) never crash: the
//!   library answers or returns `QJSON_ERR_PANIC` from its panic barrier,
//!   and does not unwind into the caller.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use qjson::capi::{self, CCursor, Handle, Iter};
use std::cell::Cell;
use std::ffi::{c_char, c_int, CStr};
use std::ptr::{null, null_mut};
use std::sync::Once;

const OK: c_int = 0;
const END: c_int = 1;
const NOT_FOUND: c_int = 2;
const PATH: c_int = 4;
const JSON: c_int = 5;
const ARG: c_int = 6;
const PANIC: c_int = 7;

#[derive(Debug, Arbitrary)]
enum Op<'a> {
    Parse {
        which: u8,
        lazy: bool,
        max_depth: u8,
    },
    Free {
        which: u8,
    },
    Find {
        doc: u8,
        base: Option<u8>,
        path: &'a [u8],
    },
    Field {
        doc: u8,
        base: Option<u8>,
        key: &'a [u8],
    },
    Index {
        doc: u8,
        base: Option<u8>,
        i: i64,
    },
    GetStr {
        doc: u8,
        base: Option<u8>,
        path: &'a [u8],
    },
    GetI64 {
        doc: u8,
        base: Option<u8>,
        path: &'a [u8],
    },
    GetF64 {
        doc: u8,
        base: Option<u8>,
        path: &'a [u8],
    },
    GetBool {
        doc: u8,
        base: Option<u8>,
        path: &'a [u8],
    },
    Typeof {
        doc: u8,
        base: Option<u8>,
        path: &'a [u8],
    },
    Len {
        doc: u8,
        base: Option<u8>,
        path: &'a [u8],
    },
    Span {
        doc: u8,
        base: Option<u8>,
        path: &'a [u8],
    },
    IterInit {
        doc: u8,
        base: Option<u8>,
        path: &'a [u8],
    },
    IterNext {
        it: u8,
        want_key: bool,
    },
    Memory {
        doc: u8,
    },
    NullArgs {
        doc: u8,
        which: u8,
    },
    Forged {
        doc: u8,
        start: u32,
        sidx: u32,
        ord: u32,
        kind: u32,
        which: u8,
    },
}

#[derive(Debug, Arbitrary)]
struct Input<'a> {
    /// Up to four JSON texts; `Parse { which }` picks one.
    texts: Vec<&'a [u8]>,
    ops: Vec<Op<'a>>,
}

/// One live document: its handle, the text it borrows, and the cursors and
/// iterators taken from it.
struct Live {
    h: *mut Handle,
    text: Vec<u8>,
    lazy: bool,
    cursors: Vec<CCursor>,
    iters: Vec<Iter>,
}

thread_local! {
    /// Set while a call with a forged cursor runs: a panic there is the
    /// documented answer (`QJSON_ERR_PANIC`), not a finding.
    static PANIC_OK: Cell<bool> = const { Cell::new(false) };
}

/// libfuzzer-sys aborts on any panic, even one caught later by the C ABI's
/// barrier. Keep that for legitimate calls (a panic there is a bug), allow
/// it for forged cursors.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let fuzzer_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !PANIC_OK.with(Cell::get) {
                fuzzer_hook(info);
            }
        }));
    });
}

fn last_error() -> (c_int, usize, String) {
    let mut status = -1;
    let mut offset = usize::MAX;
    // SAFETY: both out-pointers are valid locals.
    let msg = unsafe { capi::qjson_last_error(&mut status, &mut offset) };
    assert!(!msg.is_null());
    // SAFETY: qjson_last_error returns a NUL-terminated string valid until
    // the next failing call on this thread; it is copied at once.
    let msg = unsafe { CStr::from_ptr(msg) }
        .to_string_lossy()
        .into_owned();
    (status, offset, msg)
}

/// Common checks on a status from a legitimate call.
fn check_status(rc: c_int, path_len: usize, text_len: usize) {
    assert!((OK..=ARG).contains(&rc), "status {rc}");
    if rc >= NOT_FOUND {
        let (status, offset, msg) = last_error();
        assert_eq!(status, rc, "{msg}");
        assert!(!msg.is_empty());
        match rc {
            NOT_FOUND | PATH => assert!(offset <= path_len, "{msg}: offset {offset}"),
            JSON => assert!(offset <= text_len, "{msg}: offset {offset}"),
            _ => {}
        }
    }
}

fn pick<T: Copy>(v: &[T], i: u8) -> Option<T> {
    (!v.is_empty()).then(|| v[i as usize % v.len()])
}

fn doc_of(docs: &mut [Live], i: u8) -> Option<&mut Live> {
    let n = docs.len();
    (n > 0).then(|| &mut docs[i as usize % n])
}

/// The base cursor pointer for a call: NULL (the root) or one of ours.
fn base_ptr(live: &Live, base: Option<u8>, slot: &mut CCursor) -> *const CCursor {
    match base.and_then(|b| pick(&live.cursors, b)) {
        Some(c) => {
            *slot = c;
            slot
        }
        None => null(),
    }
}

fn run(input: Input<'_>) {
    install_hook();
    let mut docs: Vec<Live> = Vec::new();
    for op in input.ops.into_iter().take(256) {
        match op {
            Op::Parse {
                which,
                lazy,
                max_depth,
            } => {
                let Some(&text) = input.texts.get(which as usize % input.texts.len().max(1)) else {
                    continue;
                };
                if docs.len() >= 4 {
                    continue;
                }
                let text = text.to_vec();
                let opts = capi::Options {
                    lazy: lazy as c_int,
                    max_depth: max_depth as u32,
                };
                let mut h: *mut Handle = null_mut();
                // SAFETY: `text` is readable for its length and kept alive
                // (moved into `Live`, whose heap buffer does not move) until
                // qjson_free; `opts` and `h` are valid locals.
                let rc =
                    unsafe { capi::qjson_parse(text.as_ptr().cast(), text.len(), &opts, &mut h) };
                check_status(rc, 0, text.len());
                let core = qjson::Index::build(
                    &text,
                    &qjson::Options {
                        lazy,
                        max_depth: if max_depth == 0 {
                            1024
                        } else {
                            max_depth as usize
                        },
                    },
                );
                assert_eq!(rc == OK, core.is_ok(), "C ABI and core disagree on accept");
                if rc == OK {
                    assert!(!h.is_null());
                    docs.push(Live {
                        h,
                        text,
                        lazy,
                        cursors: Vec::new(),
                        iters: Vec::new(),
                    });
                } else {
                    assert_eq!(rc, JSON);
                    let (_, offset, _) = last_error();
                    assert_eq!(offset, core.unwrap_err().offset);
                }
            }
            Op::Free { which } => {
                if docs.is_empty() {
                    continue;
                }
                let live = docs.swap_remove(which as usize % docs.len());
                // SAFETY: a handle from qjson_parse, freed once; its cursors
                // and iterators are dropped with `live`.
                unsafe { capi::qjson_free(live.h) };
            }
            Op::Find { doc, base, path } => {
                let Some(live) = doc_of(&mut docs, doc) else {
                    continue;
                };
                let mut slot = CCursor::default();
                let at = base_ptr(live, base, &mut slot);
                let mut out = CCursor::default();
                // SAFETY: live handle, `at` null or a cursor from this
                // document, `path` readable, `out` a valid local.
                let rc = unsafe {
                    capi::qjson_find(live.h, at, path.as_ptr().cast(), path.len(), &mut out)
                };
                check_status(rc, path.len(), live.text.len());
                if rc == OK {
                    assert!((1..=6).contains(&out.kind));
                    // The same read through the core API.
                    if at.is_null() {
                        if let Ok(p) = std::str::from_utf8(path) {
                            let opts = qjson::Options {
                                lazy: live.lazy,
                                max_depth: 4096,
                            };
                            let index = qjson::Index::build(&live.text, &opts).unwrap();
                            let d = qjson::Doc::new(&live.text, &index);
                            let c = d.find(d.root(), p).unwrap();
                            assert_eq!(c.offset(), out.start as usize);
                            assert_eq!(d.type_of(c) as u32 + 1, out.kind);
                        }
                    }
                    if live.cursors.len() < 64 {
                        live.cursors.push(out);
                    }
                }
            }
            Op::Field { doc, base, key } => {
                let Some(live) = doc_of(&mut docs, doc) else {
                    continue;
                };
                let mut slot = CCursor::default();
                let at = base_ptr(live, base, &mut slot);
                let mut out = CCursor::default();
                // SAFETY: as in Find.
                let rc = unsafe {
                    capi::qjson_field(live.h, at, key.as_ptr().cast(), key.len(), &mut out)
                };
                check_status(rc, key.len(), live.text.len());
                if rc == OK && live.cursors.len() < 64 {
                    live.cursors.push(out);
                }
            }
            Op::Index { doc, base, i } => {
                let Some(live) = doc_of(&mut docs, doc) else {
                    continue;
                };
                let mut slot = CCursor::default();
                let at = base_ptr(live, base, &mut slot);
                let mut out = CCursor::default();
                // SAFETY: as in Find.
                let rc = unsafe { capi::qjson_index(live.h, at, i % 1000, &mut out) };
                check_status(rc, 0, live.text.len());
                if rc == OK && live.cursors.len() < 64 {
                    live.cursors.push(out);
                }
            }
            Op::GetStr { doc, base, path } => {
                let Some(live) = doc_of(&mut docs, doc) else {
                    continue;
                };
                let mut slot = CCursor::default();
                let at = base_ptr(live, base, &mut slot);
                let mut p: *const c_char = null();
                let mut n = usize::MAX;
                // SAFETY: as in Find; `p` and `n` are valid locals.
                let rc = unsafe {
                    capi::qjson_get_str(
                        live.h,
                        at,
                        path.as_ptr().cast(),
                        path.len(),
                        &mut p,
                        &mut n,
                    )
                };
                check_status(rc, path.len(), live.text.len());
                if rc == OK {
                    assert!(!p.is_null() || n == 0);
                    if n > 0 {
                        // SAFETY: the library returned `n` readable bytes,
                        // valid until the next call on this thread.
                        let s = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) }.to_vec();
                        assert!(
                            std::str::from_utf8(&s).is_ok(),
                            "get_str returned invalid UTF-8"
                        );
                    }
                }
            }
            Op::GetI64 { doc, base, path } => {
                let Some(live) = doc_of(&mut docs, doc) else {
                    continue;
                };
                let mut slot = CCursor::default();
                let at = base_ptr(live, base, &mut slot);
                let mut v = 0i64;
                // SAFETY: as in Find.
                let rc = unsafe {
                    capi::qjson_get_i64(live.h, at, path.as_ptr().cast(), path.len(), &mut v)
                };
                check_status(rc, path.len(), live.text.len());
            }
            Op::GetF64 { doc, base, path } => {
                let Some(live) = doc_of(&mut docs, doc) else {
                    continue;
                };
                let mut slot = CCursor::default();
                let at = base_ptr(live, base, &mut slot);
                let mut v = 0f64;
                // SAFETY: as in Find.
                let rc = unsafe {
                    capi::qjson_get_f64(live.h, at, path.as_ptr().cast(), path.len(), &mut v)
                };
                check_status(rc, path.len(), live.text.len());
            }
            Op::GetBool { doc, base, path } => {
                let Some(live) = doc_of(&mut docs, doc) else {
                    continue;
                };
                let mut slot = CCursor::default();
                let at = base_ptr(live, base, &mut slot);
                let mut v: c_int = -1;
                // SAFETY: as in Find.
                let rc = unsafe {
                    capi::qjson_get_bool(live.h, at, path.as_ptr().cast(), path.len(), &mut v)
                };
                check_status(rc, path.len(), live.text.len());
                if rc == OK {
                    assert!(v == 0 || v == 1);
                }
            }
            Op::Typeof { doc, base, path } => {
                let Some(live) = doc_of(&mut docs, doc) else {
                    continue;
                };
                let mut slot = CCursor::default();
                let at = base_ptr(live, base, &mut slot);
                let mut v: c_int = -1;
                // SAFETY: as in Find.
                let rc = unsafe {
                    capi::qjson_typeof(live.h, at, path.as_ptr().cast(), path.len(), &mut v)
                };
                check_status(rc, path.len(), live.text.len());
                if rc == OK {
                    assert!((1..=6).contains(&v));
                    if path.is_empty() && !at.is_null() {
                        assert_eq!(
                            v as u32, slot.kind,
                            "typeof disagrees with the cursor's type"
                        );
                    }
                }
            }
            Op::Len { doc, base, path } => {
                let Some(live) = doc_of(&mut docs, doc) else {
                    continue;
                };
                let mut slot = CCursor::default();
                let at = base_ptr(live, base, &mut slot);
                let mut v = usize::MAX;
                // SAFETY: as in Find.
                let rc = unsafe {
                    capi::qjson_len(live.h, at, path.as_ptr().cast(), path.len(), &mut v)
                };
                check_status(rc, path.len(), live.text.len());
                if rc == OK {
                    assert!(v <= live.text.len());
                }
            }
            Op::Span { doc, base, path } => {
                let Some(live) = doc_of(&mut docs, doc) else {
                    continue;
                };
                let mut slot = CCursor::default();
                let at = base_ptr(live, base, &mut slot);
                let (mut a, mut b) = (usize::MAX, usize::MAX);
                // SAFETY: as in Find.
                let rc = unsafe {
                    capi::qjson_span(live.h, at, path.as_ptr().cast(), path.len(), &mut a, &mut b)
                };
                check_status(rc, path.len(), live.text.len());
                if rc == OK {
                    assert!(
                        a < b && b <= live.text.len(),
                        "span {a}..{b} of {}",
                        live.text.len()
                    );
                }
            }
            Op::IterInit { doc, base, path } => {
                let Some(live) = doc_of(&mut docs, doc) else {
                    continue;
                };
                let mut slot = CCursor::default();
                let at = base_ptr(live, base, &mut slot);
                let mut it = std::mem::MaybeUninit::<Iter>::uninit();
                // SAFETY: as in Find; `it` is writable.
                let rc = unsafe {
                    capi::qjson_iter_init(
                        live.h,
                        at,
                        path.as_ptr().cast(),
                        path.len(),
                        it.as_mut_ptr(),
                    )
                };
                check_status(rc, path.len(), live.text.len());
                if rc == OK && live.iters.len() < 16 {
                    // SAFETY: QJSON_OK means the iterator was written.
                    live.iters.push(unsafe { it.assume_init() });
                }
            }
            Op::IterNext { it, want_key } => {
                // Iterators belong to their document: pick among documents
                // that have some.
                let Some(live) = docs.iter_mut().find(|l| !l.iters.is_empty()) else {
                    continue;
                };
                let k = it as usize % live.iters.len();
                let mut key: *const c_char = null();
                let mut key_len = usize::MAX;
                let mut value = CCursor::default();
                let (kp, kl) = if want_key {
                    (&mut key as *mut _, &mut key_len as *mut _)
                } else {
                    (null_mut(), null_mut())
                };
                // SAFETY: live handle, an iterator from it, valid out-pointers.
                let rc = unsafe {
                    capi::qjson_iter_next(live.h, &mut live.iters[k], kp, kl, &mut value)
                };
                assert!(rc == OK || rc == END || rc == JSON, "iter_next status {rc}");
                check_status(rc, 0, live.text.len());
                if rc == OK {
                    if want_key && key_len > 0 {
                        // SAFETY: `key_len` readable bytes, per the contract.
                        let s = unsafe { std::slice::from_raw_parts(key.cast::<u8>(), key_len) }
                            .to_vec();
                        assert!(std::str::from_utf8(&s).is_ok());
                    }
                    if live.cursors.len() < 64 {
                        live.cursors.push(value);
                    }
                } else if rc == END {
                    // Stays at the end.
                    // SAFETY: as above.
                    let rc2 = unsafe {
                        capi::qjson_iter_next(
                            live.h,
                            &mut live.iters[k],
                            null_mut(),
                            null_mut(),
                            &mut value,
                        )
                    };
                    assert_eq!(rc2, END);
                }
            }
            Op::Memory { doc } => {
                let Some(live) = doc_of(&mut docs, doc) else {
                    continue;
                };
                // SAFETY: live handle.
                let m = unsafe { capi::qjson_memory(live.h) };
                assert!(m > 0);
            }
            Op::NullArgs { doc, which } => {
                let h = doc_of(&mut docs, doc).map_or(null(), |l| l.h as *const Handle);
                let mut out = CCursor::default();
                // SAFETY: every pointer is null or valid; the library must
                // answer QJSON_ERR_ARG for the required ones that are null.
                let rc = unsafe {
                    match which % 5 {
                        0 => capi::qjson_find(null(), null(), null(), 0, &mut out),
                        1 => capi::qjson_find(h, null(), null(), 0, null_mut()),
                        2 => capi::qjson_find(h, null(), null(), 3, &mut out),
                        3 => capi::qjson_parse(null(), 3, null(), &mut null_mut()),
                        _ => capi::qjson_parse(c"1".as_ptr(), 1, null(), null_mut()),
                    }
                };
                assert_eq!(rc, ARG, "case {}", which % 5);
                let (status, _, _) = last_error();
                assert_eq!(status, ARG);
            }
            Op::Forged {
                doc,
                start,
                sidx,
                ord,
                kind,
                which,
            } => {
                let Some(live) = doc_of(&mut docs, doc) else {
                    continue;
                };
                // Near the real ranges, so some forged cursors look plausible.
                let n = live.text.len() as u32 + 2;
                let forged = CCursor {
                    start: start % n,
                    sidx: sidx % n,
                    ord: ord % n,
                    kind: kind % 8,
                };
                PANIC_OK.with(|p| p.set(true));
                let mut out = CCursor::default();
                let mut p: *const c_char = null();
                let mut len = 0usize;
                let mut it = std::mem::MaybeUninit::<Iter>::uninit();
                // SAFETY: the handle is live and every pointer valid; the
                // cursor breaks the contract on purpose (plain data).
                let rc = unsafe {
                    match which % 6 {
                        0 => capi::qjson_find(live.h, &forged, c"a[0]".as_ptr(), 4, &mut out),
                        1 => capi::qjson_get_str(live.h, &forged, null(), 0, &mut p, &mut len),
                        2 => capi::qjson_len(live.h, &forged, null(), 0, &mut len),
                        3 => capi::qjson_span(live.h, &forged, null(), 0, &mut len, &mut 0),
                        4 => capi::qjson_index(live.h, &forged, 1, &mut out),
                        _ => {
                            let rc =
                                capi::qjson_iter_init(live.h, &forged, null(), 0, it.as_mut_ptr());
                            if rc == OK {
                                let mut it = it.assume_init();
                                for _ in 0..4 {
                                    capi::qjson_iter_next(
                                        live.h, &mut it, &mut p, &mut len, &mut out,
                                    );
                                }
                            }
                            rc
                        }
                    }
                };
                PANIC_OK.with(|p| p.set(false));
                assert!((OK..=PANIC).contains(&rc), "status {rc}");
                if rc == PANIC {
                    let (status, _, msg) = last_error();
                    assert_eq!(status, PANIC);
                    assert!(msg.starts_with("internal error (panic)"), "{msg}");
                }
                if rc == OK && which % 6 == 1 && len > 0 {
                    // SAFETY: `len` readable bytes.
                    let _ = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }.to_vec();
                }
            }
        }
    }
    for live in docs {
        // SAFETY: each handle is freed once.
        unsafe { capi::qjson_free(live.h) };
    }
}

fuzz_target!(|input: Input<'_>| run(input));
