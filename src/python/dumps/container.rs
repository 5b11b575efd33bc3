//! What the container writers (`dict`, `list`, `tuple`) share.
//!
//! The container loops keep the write position in registers ([`Pos`]) and
//! keep [`ROOM`] bytes of room ahead, so the common members are written
//! with no call and no capacity check of their own
//! ([`super::scalar::fast_scalar`]); [`Serializer::member`] writes one
//! member value, [`Serializer::nested`] takes the values the fast path did
//! not, and [`Serializer::close`] writes the closer.
//!
//! Open containers are kept on a stack ([`Serializer::enter`],
//! [`Serializer::leave`]): the first [`CYCLE_CHECK_DEPTH`] inline, so a
//! call allocates nothing for it; past that depth each new container is
//! looked up in it, which finds every cycle (a cycle nests without end and
//! repeats an object), [`MAX_DEPTH`] bounds legitimate nesting, and the
//! walk stops before the thread's stack runs out (`stack`: a thread with a
//! small stack gets `JSONEncodeError`, not a crash).

use super::error::encode_error;
use super::out::Out;
#[cfg(not(feature = "abi3"))]
use super::scalar::fast_list;
use super::scalar::fast_scalar;
use super::Serializer;
use crate::encode::{Buf, F64_MAX_LEN, I64_MAX_LEN, MEDIUM_STR_MAX_LEN};
use crate::python::stack;
use pyo3::ffi;
use pyo3::prelude::*;

/// Containers may nest this deep; deeper raises `JSONEncodeError`.
pub(super) const MAX_DEPTH: usize = 1024;
/// From this depth on, each new container is checked against the open ones.
pub(super) const CYCLE_CHECK_DEPTH: usize = 32;

/// Room the container loops keep ahead of the write position: a
/// separator, a key under `MEDIUM_STR` bytes and its `": "`, and the longest fast scalar.
pub(super) const ROOM: usize = 160;
const _: () = assert!(2 + MEDIUM_STR_MAX_LEN + 2 + MEDIUM_STR_MAX_LEN <= ROOM);
const _: () = assert!(I64_MAX_LEN <= MEDIUM_STR_MAX_LEN && F64_MAX_LEN <= MEDIUM_STR_MAX_LEN);

/// The write position of the output, copied into locals so that the
/// container loops keep it in registers: a length field in memory would be
/// stored and loaded again for each piece written, a store-forwarding round
/// trip on the critical path of every value. It is stored back
/// ([`Pos::store`]) before anything else writes to the output, and read
/// again ([`Pos::of`]) after.
#[derive(Clone, Copy)]
pub(super) struct Pos {
    ptr: *mut u8,
    pub(super) len: usize,
    cap: usize,
}

impl Pos {
    #[inline(always)]
    pub(super) fn of(out: &mut Out) -> Pos {
        let len = out.len();
        Pos {
            ptr: out.as_mut_ptr(),
            len,
            cap: len + out.spare(),
        }
    }

    /// Set the output's length to this position.
    #[inline(always)]
    pub(super) fn store(self, out: &mut Out) {
        // SAFETY: `self` was read from `out` (same buffer, no growth since)
        // and every byte up to `len` was written through it.
        unsafe { out.set_len(self.len) }
    }

    #[inline(always)]
    pub(super) fn room(&self) -> usize {
        self.cap - self.len
    }

    /// Where the next byte goes.
    #[inline(always)]
    pub(super) fn at(&self) -> *mut u8 {
        self.ptr.wrapping_add(self.len)
    }

    /// Append one byte.
    ///
    /// # Safety
    /// There must be room for it.
    #[inline(always)]
    pub(super) unsafe fn put(&mut self, b: u8) {
        debug_assert!(self.room() >= 1);
        // SAFETY: per the contract.
        unsafe { *self.ptr.add(self.len) = b };
        self.len += 1;
    }
}

impl<'py> Serializer<'py> {
    /// Enter a container: cycle and depth checks.
    #[inline(always)]
    pub(super) fn enter(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        if self.depth >= CYCLE_CHECK_DEPTH {
            return self.enter_deep(obj);
        }
        self.open_head[self.depth] = obj;
        self.depth += 1;
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn enter_deep(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        if self.open_head.contains(&obj) || self.open_tail.contains(&obj) {
            return Err(encode_error(self.py, "Circular reference detected"));
        }
        if self.depth >= MAX_DEPTH {
            return Err(encode_error(self.py, "Maximum nesting depth exceeded"));
        }
        if stack::low() {
            return Err(encode_error(self.py, stack::TOO_DEEP));
        }
        self.open_tail.push(obj);
        self.depth += 1;
        Ok(())
    }

    /// Leave the innermost open container.
    #[inline(always)]
    pub(super) fn leave(&mut self) {
        if self.depth > CYCLE_CHECK_DEPTH {
            self.open_tail.pop();
        }
        self.depth -= 1;
    }

    /// A newline and the indentation of the current depth.
    #[inline(always)]
    pub(super) fn newline(&mut self, depth: usize) {
        self.out.push(b'\n');
        self.out.fill(b' ', depth * self.indent);
    }

    /// Write one member value at `pos` (scalars inline, others through
    /// `nested`) and return the position after it, with [`ROOM`] to spare.
    /// With `SHORT` (compact output only), short lists of scalars are
    /// written inline too ([`fast_list`]): dict values and the items of
    /// lists of lists, where such lists occur. Flat lists leave it out, so
    /// that their loop keeps its registers (about 5 instructions an item
    /// less on big lists of numbers).
    ///
    /// # Safety
    /// `val` must be alive (borrowed from a container the caller holds) and
    /// `pos` must have [`ROOM`] bytes of room.
    #[inline(always)]
    pub(super) unsafe fn member<const PRETTY: bool, const SHORT: bool>(
        &mut self,
        mut pos: Pos,
        val: *mut ffi::PyObject,
    ) -> PyResult<Pos> {
        // SAFETY: the caller's contract; ROOM covers a fast scalar.
        let k = unsafe { fast_scalar(pos.at(), val) };
        // Short lists of fast scalars, compact output only.
        #[cfg(not(feature = "abi3"))]
        let k = if SHORT && k == 0 && !PRETTY {
            // SAFETY: `val` is alive (the contract) and `pos.at()` is
            // writable for `pos.room()` bytes.
            unsafe { fast_list(pos.at(), pos.room(), val) }
        } else {
            k
        };
        if k != 0 {
            pos.len += k;
        } else {
            pos.store(&mut self.out);
            self.nested::<PRETTY>(val)?;
            pos = Pos::of(&mut self.out);
        }
        if pos.room() < ROOM {
            pos = self.grow_pos(pos);
        }
        Ok(pos)
    }

    /// Close a container opened at `depth` (`}` or `]`) and leave it.
    #[inline(always)]
    pub(super) fn close<const PRETTY: bool>(&mut self, mut pos: Pos, depth: usize, closer: u8) {
        if PRETTY {
            pos.store(&mut self.out);
            self.newline(depth - 1);
            pos = self.pos_with_room();
        }
        // SAFETY: `pos` has room (`member` and `pos_with_room` leave ROOM).
        unsafe { pos.put(closer) };
        pos.store(&mut self.out);
        self.leave();
    }

    /// A value the container loops' fast path did not take: exact dicts,
    /// lists and strs go straight to their writers, the rest to
    /// [`Self::value`].
    #[inline(always)]
    fn nested<const PRETTY: bool>(&mut self, obj: *mut ffi::PyObject) -> PyResult<()> {
        // SAFETY: `obj` is alive (caller's contract); the type objects are
        // statics.
        let ty = unsafe { ffi::Py_TYPE(obj) };
        if ty == std::ptr::addr_of_mut!(ffi::PyDict_Type) {
            self.dict::<PRETTY>(obj)
        } else if ty == std::ptr::addr_of_mut!(ffi::PyList_Type) {
            self.list::<PRETTY>(obj)
        } else if ty == std::ptr::addr_of_mut!(ffi::PyUnicode_Type) {
            self.str(obj)
        } else {
            self.value::<PRETTY>(obj)
        }
    }

    /// The write position of `self.out`, with at least [`ROOM`] bytes of
    /// room.
    #[inline(always)]
    pub(super) fn pos_with_room(&mut self) -> Pos {
        let pos = Pos::of(&mut self.out);
        if pos.room() < ROOM {
            return self.grow_pos(pos);
        }
        pos
    }

    /// Store `pos`, make [`ROOM`] bytes of room and return the new position.
    #[cold]
    #[inline(never)]
    fn grow_pos(&mut self, pos: Pos) -> Pos {
        pos.store(&mut self.out);
        self.out.reserve(ROOM);
        Pos::of(&mut self.out)
    }
}
