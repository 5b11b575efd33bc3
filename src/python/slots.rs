//! Raw CPython entry points for the hottest reads, installed over the ones
//! PyO3 generated.
//!
//! # Why
//!
//! A read such as `view["id"]` or `cursor.get_int("id")` does little work
//! in the core, so the call itself shows: PyO3's trampoline counts the
//! thread's attachment in a thread-local (two `__tls_get_addr` calls in a
//! shared library), checks its pool of deferred reference drops, extracts
//! the arguments through a generic description of the signature and
//! checks the borrow flag. Together about as much as the lookup.
//!
//! # How
//!
//! After the classes are made, [`replace_method`] swaps the C function of a
//! `METH_FASTCALL | METH_KEYWORDS` method in the type's dict for a plain
//! `extern "C"` function with the same name, flags and doc (so the
//! signature `inspect` reports does not change), and [`replace_subscript`],
//! [`replace_ass_subscript`] and [`replace_iter`] swap the type's
//! `mp_subscript`, `mp_ass_subscript` and `tp_iter` slots. The function
//! PyO3 made is kept ([`Original`]): each raw entry point runs the common case (an exact
//! `str` or `int` argument, a lazy view without edits, a value found) and
//! hands every other call to the original, unchanged, which then does
//! what it always did, errors included. A fast path that fails part-way
//! has changed nothing a reader can see (at most it cached a view), so the
//! original simply runs again.
//!
//! # Rules for a fast path ([`run`])
//!
//! - It returns `Some(new reference)` or `None` ("call the original"); it
//!   never raises.
//! - It drops no `Py<T>`: PyO3 decides at each drop whether the thread is
//!   attached by its own thread-local count, which these entry points do
//!   not raise, and would defer the release to a global pool that every
//!   later PyO3 call then locks. Temporaries are `Bound`s (released at
//!   once); results leave as raw pointers; anything else that must be
//!   dropped (a `PyErr`) goes through [`release`].
//! - A panic is caught and the original is called (which reports it the
//!   way PyO3 does).
//!
//! The stable ABI hides the type layouts this needs: `abi3` builds keep
//! PyO3's entry points (see `install`).

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyModule, PyType};
use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

/// The C function PyO3 made for a method or slot, kept when a raw entry
/// point replaces it.
pub(crate) struct Original<F>(OnceLock<F>);

impl<F: Copy> Original<F> {
    pub(crate) const fn new() -> Self {
        Original(OnceLock::new())
    }

    /// The replaced function (set by the install, before any call).
    #[inline(always)]
    pub(crate) fn get(&self) -> F {
        *self.0.get().expect("the raw entry point was installed")
    }

    fn set(&self, f: F) {
        // A second install (another module object in the same process)
        // finds the same PyO3 function: keep the first.
        let _ = self.0.set(f);
    }
}

/// A `METH_FASTCALL | METH_KEYWORDS` method.
pub(crate) type FastCall = ffi::PyCFunctionFastWithKeywords;

/// Run `fast`, the common case of a raw entry point: `Some(new reference)`,
/// or `None` when the original must handle the call (and when `fast`
/// panicked).
///
/// # Safety
///
/// CPython called the entry point: the thread is attached to the
/// interpreter (the GIL is held).
#[inline(always)]
pub(crate) unsafe fn run(
    fast: impl FnOnce(Python<'_>) -> Option<*mut ffi::PyObject>,
) -> Option<*mut ffi::PyObject> {
    // SAFETY: the caller guarantees the thread is attached. The token is
    // used only under the rules in the module docs.
    let py = unsafe { Python::assume_attached() };
    catch_unwind(AssertUnwindSafe(|| fast(py))).unwrap_or(None)
}

/// Drop `v` (a `PyErr`, or anything holding `Py` references) with PyO3's
/// attachment counted, so its references are released now.
#[cold]
pub(crate) fn release<T>(v: T) {
    Python::attach(|_| drop(v));
}

/// `r` as a raw new reference; `None` (after releasing the error) on Err.
#[inline(always)]
pub(crate) fn owned<T>(r: PyResult<Py<T>>) -> Option<*mut ffi::PyObject> {
    match r {
        Ok(v) => Some(v.into_ptr()),
        Err(e) => {
            release(e);
            None
        }
    }
}

/// Replace the C function of method `name` of `ty` with `f`, keeping the
/// method's name, flags and doc; the function replaced goes to `orig`.
/// The method must be one PyO3 made with `METH_FASTCALL | METH_KEYWORDS`.
pub(crate) fn replace_method(
    ty: &Bound<'_, PyType>,
    name: &'static CStr,
    f: FastCall,
    orig: &'static Original<FastCall>,
) -> PyResult<()> {
    let tp = ty.as_type_ptr();
    // SAFETY: the interpreter is attached (`ty` is bound). `tp_dict` is the
    // type's own dict; the item read is a borrowed reference that stays
    // alive while it is in the dict, which we hold until the new descriptor
    // replaced it. A method descriptor (checked by its exact type) starts
    // with `PyMethodDescrObject`, whose `d_method` points to the
    // `PyMethodDef` PyO3 keeps for the life of the process.
    unsafe {
        let dict = (*tp).tp_dict;
        let descr = ffi::PyDict_GetItemString(dict, name.as_ptr());
        if descr.is_null() || ffi::Py_TYPE(descr) != std::ptr::addr_of_mut!(ffi::PyMethodDescr_Type)
        {
            return Err(install_error(name));
        }
        let def = (*descr.cast::<ffi::PyMethodDescrObject>()).d_method;
        if (*def).ml_flags != ffi::METH_FASTCALL | ffi::METH_KEYWORDS {
            return Err(install_error(name));
        }
        // (The new descriptor references it for as long as the type lives.)
        let new_def = swap_def(def, f, orig);
        let new_descr = ffi::PyDescr_NewMethod(tp, new_def);
        if new_descr.is_null() {
            return Err(PyErr::fetch(ty.py()));
        }
        let rc = ffi::PyDict_SetItemString(dict, name.as_ptr(), new_descr);
        ffi::Py_DECREF(new_descr);
        if rc != 0 {
            return Err(PyErr::fetch(ty.py()));
        }
        ffi::PyType_Modified(tp);
    }
    Ok(())
}

/// Keep `def`'s C function in `orig` and make a copy of `def` (name,
/// flags, doc) that calls `f` instead. The copy is made once per module
/// initialisation and referenced by what is built on it for as long as that
/// lives: leaked on purpose.
///
/// # Safety
///
/// `def` points to a live `METH_FASTCALL | METH_KEYWORDS` method definition.
unsafe fn swap_def(
    def: *mut ffi::PyMethodDef,
    f: FastCall,
    orig: &'static Original<FastCall>,
) -> *mut ffi::PyMethodDef {
    // SAFETY: `def` is live and its flags say which union member is set
    // (the caller's contract).
    unsafe {
        orig.set((*def).ml_meth.PyCFunctionFastWithKeywords);
        Box::into_raw(Box::new(ffi::PyMethodDef {
            ml_name: (*def).ml_name,
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunctionFastWithKeywords: f,
            },
            ml_flags: (*def).ml_flags,
            ml_doc: (*def).ml_doc,
        }))
    }
}

/// Replace the C function of the module-level function `name` of
/// `module` with `f`, keeping its name, flags and doc: a new function
/// object (same `__self__` and `__module__`) goes into the module's dict.
/// The function replaced goes to `orig`. It must be one PyO3 made with
/// `METH_FASTCALL | METH_KEYWORDS` (and `METH_STATIC`, as PyO3 does).
pub(crate) fn replace_function(
    module: &Bound<'_, PyModule>,
    name: &'static CStr,
    f: FastCall,
    orig: &'static Original<FastCall>,
) -> PyResult<()> {
    let py = module.py();
    let old = module.getattr(name.to_str().map_err(|_| install_error(name))?)?;
    let p = old.as_ptr();
    // SAFETY: the interpreter is attached and `old` (a new reference) keeps
    // the function alive. A builtin function (checked by its exact type) is
    // a `PyCFunctionObject` whose `m_ml` points to the `PyMethodDef` PyO3
    // keeps for the life of the process; `m_self` and `m_module` are
    // borrowed by `PyCFunction_NewEx`, which takes its own references.
    unsafe {
        if ffi::PyCFunction_CheckExact(p) == 0 {
            return Err(install_error(name));
        }
        let func = p.cast::<ffi::PyCFunctionObject>();
        let def = (*func).m_ml;
        // PyO3 marks module functions METH_STATIC too, which CPython
        // ignores outside a class.
        if (*def).ml_flags & !ffi::METH_STATIC != ffi::METH_FASTCALL | ffi::METH_KEYWORDS {
            return Err(install_error(name));
        }
        // (The new function references it for as long as it lives.)
        let new_def = swap_def(def, f, orig);
        let new = ffi::PyCFunction_NewEx(new_def, (*func).m_self, (*func).m_module);
        let new = Bound::from_owned_ptr_or_err(py, new)?;
        module.setattr(name.to_str().map_err(|_| install_error(name))?, new)?;
    }
    Ok(())
}

/// Replace the `mp_subscript` slot of `ty` (`obj[key]`) with `f`; the
/// function replaced goes to `orig`.
pub(crate) fn replace_subscript(
    ty: &Bound<'_, PyType>,
    f: ffi::binaryfunc,
    orig: &'static Original<ffi::binaryfunc>,
) -> PyResult<()> {
    let tp = ty.as_type_ptr();
    // SAFETY: the interpreter is attached. A heap type's `tp_as_mapping`
    // points into its own `PyHeapTypeObject`, writable for its lifetime;
    // `PyType_Modified` drops what CPython cached about the type.
    unsafe {
        let mapping = (*tp).tp_as_mapping;
        let Some(old) = mapping.as_ref().and_then(|m| m.mp_subscript) else {
            return Err(install_error(c"__getitem__"));
        };
        orig.set(old);
        (*mapping).mp_subscript = Some(f);
        ffi::PyType_Modified(tp);
    }
    Ok(())
}

/// Replace the `mp_ass_subscript` slot of `ty` (`obj[key] = value` and
/// `del obj[key]`) with `f`; the function replaced goes to `orig`.
pub(crate) fn replace_ass_subscript(
    ty: &Bound<'_, PyType>,
    f: ffi::objobjargproc,
    orig: &'static Original<ffi::objobjargproc>,
) -> PyResult<()> {
    let tp = ty.as_type_ptr();
    // SAFETY: as in `replace_subscript`.
    unsafe {
        let mapping = (*tp).tp_as_mapping;
        let Some(old) = mapping.as_ref().and_then(|m| m.mp_ass_subscript) else {
            return Err(install_error(c"__setitem__"));
        };
        orig.set(old);
        (*mapping).mp_ass_subscript = Some(f);
        ffi::PyType_Modified(tp);
    }
    Ok(())
}

/// Replace the `mp_length` slot of `ty` (`len(obj)`) with `f`; the
/// function replaced goes to `orig`.
pub(crate) fn replace_length(
    ty: &Bound<'_, PyType>,
    f: ffi::lenfunc,
    orig: &'static Original<ffi::lenfunc>,
) -> PyResult<()> {
    let tp = ty.as_type_ptr();
    // SAFETY: as in `replace_subscript`.
    unsafe {
        let mapping = (*tp).tp_as_mapping;
        let Some(old) = mapping.as_ref().and_then(|m| m.mp_length) else {
            return Err(install_error(c"__len__"));
        };
        orig.set(old);
        (*mapping).mp_length = Some(f);
        ffi::PyType_Modified(tp);
    }
    Ok(())
}

/// Replace the `tp_iter` slot of `ty` (`iter(obj)`) with `f`; the
/// function replaced goes to `orig`.
pub(crate) fn replace_iter(
    ty: &Bound<'_, PyType>,
    f: ffi::getiterfunc,
    orig: &'static Original<ffi::getiterfunc>,
) -> PyResult<()> {
    let tp = ty.as_type_ptr();
    // SAFETY: the interpreter is attached. `tp_iter` is a field of the
    // (heap) type object, writable for its lifetime; `PyType_Modified`
    // drops what CPython cached about the type.
    unsafe {
        let Some(old) = (*tp).tp_iter else {
            return Err(install_error(c"__iter__"));
        };
        orig.set(old);
        (*tp).tp_iter = Some(f);
        ffi::PyType_Modified(tp);
    }
    Ok(())
}

#[cold]
fn install_error(name: &CStr) -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err(format!(
        "qjson: cannot install the raw entry point of {}",
        name.to_string_lossy()
    ))
}

/// The UTF-8 text of `obj` when it is an exact `str` (keys and paths):
/// a compact ASCII string (nearly all of them) is read in place without a
/// call, other strings through their cached UTF-8 form. `None` for
/// anything else, and when the text cannot be had (a lone surrogate: the
/// original entry point reports that).
///
/// # Safety
///
/// The interpreter is attached and `obj` is a live object that outlives
/// the returned borrow.
#[inline(always)]
pub(crate) unsafe fn exact_str<'a>(obj: *mut ffi::PyObject) -> Option<&'a str> {
    // SAFETY: `obj` is live (caller's guarantee).
    if unsafe { ffi::PyUnicode_CheckExact(obj) } == 0 {
        return None;
    }
    // SAFETY: `obj` is a live exact str (checked above), alive for `'a`.
    if let Some(text) = unsafe { crate::python::input::compact_ascii(obj) } {
        return Some(text);
    }
    // SAFETY: `obj` is a live exact str (checked above).
    unsafe { utf8_of(obj) }
}

/// The cached UTF-8 form of str `obj`; `None` (error cleared) on failure.
///
/// # Safety
///
/// As [`exact_str`], and `obj` is a str.
#[inline(never)]
unsafe fn utf8_of<'a>(obj: *mut ffi::PyObject) -> Option<&'a str> {
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: `obj` is a live str and the thread is attached (caller); the UTF-8 cache is owned by the str and lives as long as it.
    // CPython guarantees the cache holds `size` bytes of valid UTF-8.
    unsafe {
        let p = ffi::PyUnicode_AsUTF8AndSize(obj, &mut size);
        if p.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        let bytes = std::slice::from_raw_parts(p.cast::<u8>(), size as usize);
        Some(std::str::from_utf8_unchecked(bytes))
    }
}
