//! Reads from an indexed document: path resolution, typed getters, raw spans
//! and iteration.
//!
//! A [`Cursor`] names one value by three numbers: its first byte, the first
//! structural at or after it, and the ordinal of the first container at or
//! after it. From these, the end of any value is O(1) (containers through the
//! container table, strings through the next structural, scalars end at the
//! next structural), so walking a container's children costs O(children),
//! never O(bytes).
//!
//! A walk over an object's members tests each key from its opening quote
//! (see `doc/key.rs`: one masked word compare for a short plain key) and
//! skips each value by the kind of its first structural, without branches.
//!
//! Containers with more than [`TABLE_MIN`] children get a child table once
//! the long reads into them (walks of at least `SHORT_WALK` children) have
//! walked as many children as they hold (positions of every child; for
//! objects also a one-byte tag or a hash of every key, the first occurrence
//! wins). A container read once or twice (a few fields of each of many
//! records) is walked, which is cheaper than indexing it, and takes no lock
//! (its long walks are counted in a lock-free slot, see `Tables`);
//! one read again and again (`messages[i]` for every `i`, every key of a
//! wide object, one key of the same object in a loop) gets its table after
//! at most two walks' worth of work, so the reads stay O(N) in total, never
//! O(N²), and a repeated read of a small object costs a compare of 16 tags
//! at a time. Built tables are read without a lock (see `Tables`).

use crate::decode::number::{long_int_span, parse_number, plain_decimal, signed};
use crate::decode::string::decode_str;
use crate::decode::Number;
use crate::error::{AccessError, ErrorKind, JsonType};
use crate::index::Index;
use crate::lex::{is_ws, skip_ws, string_close, trim_end};
use crate::path::{segments, Segment};
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Containers with more children than this may get a child table.
pub const TABLE_MIN: u32 = 16;

/// Objects with at most this many members keep a one-byte tag per key in
/// their table (searched a group at a time); larger ones a hash map of the
/// keys.
const PRINTS_MAX: usize = 64;

/// A position of one value in a document. Plain data (`Copy`, no lifetime):
/// hosts store it beside a reference to the document it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cursor {
    /// Byte offset of the value's first byte.
    pub(crate) start: u32,
    /// Index in the structurals of the first structural at or after `start`.
    pub(crate) sidx: u32,
    /// Ordinal of the first container at or after `start` (the value's own
    /// ordinal when it is a container).
    pub(crate) ord: u32,
}

impl Cursor {
    /// Byte offset of the value in the input.
    pub fn offset(&self) -> usize {
        self.start as usize
    }
}

/// Where a walk over a container's children stands: child number `i`, whose
/// value (or, in objects, key) begins at structural index `k`; `ord` is the
/// ordinal of the first container at or after it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ChildPos {
    pub container: u32,
    pub i: u32,
    pub k: u32,
    pub ord: u32,
}

/// A decoded value. Containers are returned as cursors.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Number(Number<'a>),
    String(Cow<'a, str>),
    Object(Cursor),
    Array(Cursor),
}

/// A scalar read by [`Doc::quick`].
#[derive(Debug, Clone, PartialEq)]
pub enum Quick<'a> {
    Int(i64),
    Str(Cow<'a, str>),
}

/// The child tables of a document, by container ordinal (the map is
/// created on the first long walk into any large container). A
/// [`crate::Document`] owns one; the mutex lets reads from several threads
/// share it. Reads through a built table do not take the lock: the tables
/// built last are published, lock-free, in `recent` (one slot per ordinal
/// modulo [`RECENT`]; a read whose slot holds another container's table
/// takes the locked path, which publishes its own).
///
/// The walks into a large container are counted without the lock too, in
/// `counts` (one slot per ordinal modulo [`COUNTS`], made on the first long
/// walk): the first container whose long walk finds a slot free claims it
/// for good, and its walks add up there, lock-free, until they reach its
/// length; it then takes the locked path once, with the whole count, which
/// builds its table. A container whose slot another one holds counts in
/// `map`, as before. On one thread a slot is never given up, so a
/// container counts in one place only (its slot, or the map), and the
/// guarantee is the same as with the map alone: a table after at most two
/// walks' worth of its children. Threads counting at once may lose counts
/// and may overwrite a slot's claim (a relaxed load and store, see
/// [`Tables::count`]); a container whose claim was taken then counts in
/// the map: either only delays its table. Most containers read
/// once (a field far into each of many records) then cost one load and
/// one store, not a lock and a map entry.
#[derive(Debug, Default)]
pub(crate) struct Tables {
    map: Mutex<Option<HashMap<u32, TableSlot, BuildHasherDefault<OrdinalHasher>>>>,
    recent: OnceLock<Box<[AtomicPtr<ChildTable>]>>,
    counts: OnceLock<Box<[AtomicU64]>>,
    /// The last lookups of a few containers (see `doc/memo.rs`).
    memo: memo::Memo,
}

/// Slots of [`Tables::counts`]: just under 2 KiB, which glibc clears with
/// a vector loop (from 2 KiB up it starts a `rep stosb`, which costs about
/// as many instructions as bytes under callgrind, and more set-up on a
/// CPU than the loop).
const COUNTS: usize = 255;

/// Slots of [`Tables::recent`].
const RECENT: usize = 64;

/// Walks over fewer children than this leave no trace: a read near the
/// start of a large container costs little however often it repeats, and
/// the first reads into each of many records take no lock. Longer walks are
/// counted, so reads far into a container still get its table after at
/// most two walks' worth of children.
const SHORT_WALK: u32 = 8;

impl Tables {
    /// The built table of container `ord`, when it is published in
    /// `recent`.
    #[inline(always)]
    fn recent(&self, ord: u32) -> Option<&ChildTable> {
        let slots = self.recent.get()?;
        let p = slots[ord as usize % RECENT].load(Ordering::Acquire);
        // SAFETY: a non-null pointer in `recent` was made by `Arc::as_ptr`
        // from a table that `map` holds (stored with `Release` after the
        // table was complete, read here with `Acquire`). `map` never drops
        // or replaces a `Built` table, so it lives until `self` is dropped,
        // and `&self` outlives the reference returned.
        let t = unsafe { p.as_ref() }?;
        (t.ord == ord).then_some(t)
    }

    /// Add a long walk of `walked` children of container `ord`, which has
    /// `len`, to its lock-free count. `None`: counted. `Some(n)`: not
    /// counted here (its slot belongs to another container: `n` is
    /// `walked`; or its count reaches `len`: `n` is the whole count): the
    /// caller counts `n` in the map.
    ///
    /// A slot holds the ordinal plus one in its high half (zero: free) and
    /// the count in its low half.
    #[inline]
    fn count(&self, ord: u32, walked: u32, len: u32) -> Option<u32> {
        let slots = self
            .counts
            .get_or_init(|| (0..COUNTS).map(|_| AtomicU64::new(0)).collect());
        let slot = &slots[ord as usize % COUNTS];
        // (Ordinals stay below 2^31: every container takes two bytes of
        // an input under 4 GiB.)
        let owner = (u64::from(ord) + 1) << 32;
        let cur = slot.load(Ordering::Relaxed);
        let seen = match cur & !u64::from(u32::MAX) {
            0 => 0,
            o if o == owner => cur as u32,
            _ => return Some(walked),
        };
        let now = seen.saturating_add(walked);
        if now >= len {
            return Some(now);
        }
        // A plain store, not a compare-exchange (a locked instruction on
        // every long walk of the dense reads): threads that count at once
        // may lose a walk, or one container's claim of a free slot may
        // overwrite another's, whose walks then count in the map. Either
        // only delays a table (a count is a heuristic; any table, built
        // at any time, answers the same).
        slot.store(owner | u64::from(now), Ordering::Relaxed);
        None
    }

    /// Publish `t` (held by `map`) in `recent`.
    fn publish(&self, t: &Arc<ChildTable>) {
        let slots = self.recent.get_or_init(|| {
            (0..RECENT)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect()
        });
        slots[t.ord as usize % RECENT].store(Arc::as_ptr(t).cast_mut(), Ordering::Release);
    }
}

/// A large container not indexed yet (`Seen`: the number of children the
/// reads into it have walked so far), or its table.
#[derive(Debug)]
pub(crate) enum TableSlot {
    Seen(u32),
    Built(Arc<ChildTable>),
}

/// Child positions of one large container.
#[derive(Debug)]
pub(crate) struct ChildTable {
    /// The container's ordinal.
    ord: u32,
    pos: Vec<ChildPos>,
    keys: Keys,
    /// Objects only: whether some key could not be decoded (lazy mode) and
    /// is therefore missing from `keys`.
    undecodable: bool,
}

/// The keys of an object's table.
#[derive(Debug)]
enum Keys {
    /// Arrays.
    None,
    /// Up to [`PRINTS_MAX`] members: the [`tag`] of every key, in order,
    /// then zeros to a multiple of [`TAG_GROUP`] (no child there).
    Tags(Vec<u8>),
    /// Key hash -> index of the first child with that key.
    Hashed(
        HashMap<u64, u32, PassThrough>,
        std::collections::hash_map::RandomState,
    ),
}

/// Hashes a container ordinal by a multiply (the ordinals are small
/// distinct integers: the worst case is a slower map, never a wrong answer).
#[derive(Debug, Default)]
pub(crate) struct OrdinalHasher(u64);
impl Hasher for OrdinalHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u32 keys")
    }
    fn write_u32(&mut self, v: u32) {
        self.0 = u64::from(v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The keys of `ChildTable::keys` are already hashes.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct PassThrough;
pub(crate) struct PassThroughHasher(u64);
impl BuildHasher for PassThrough {
    type Hasher = PassThroughHasher;
    fn build_hasher(&self) -> PassThroughHasher {
        PassThroughHasher(0)
    }
}
impl Hasher for PassThroughHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys")
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// An input and its index, and the child-table cache of a
/// [`crate::Document`] when it comes from one.
#[derive(Clone, Copy)]
pub struct Doc<'a> {
    input: &'a [u8],
    index: &'a Index,
    tables: Option<&'a Tables>,
}

impl<'a> Doc<'a> {
    /// Pair an input with the index built from it. Using another input is a
    /// logic error: wrong answers, `AccessError`s or a (checked) panic, such
    /// as a string body's bounds check in `string_close`; never an unchecked
    /// read out of bounds (see the test
    /// `member_walks_over_another_input_stay_in_bounds`).
    ///
    /// A `Doc` made here has no child-table cache: every read walks the
    /// containers on its path, so reading all `n` children of one container
    /// one by one costs O(n²). Keep a [`crate::Document`] and read through
    /// [`crate::Document::doc`] when one document is read many times.
    pub fn new(input: &'a [u8], index: &'a Index) -> Doc<'a> {
        Doc {
            input,
            index,
            tables: None,
        }
    }

    /// [`Doc::new`] with the document's child-table cache.
    #[inline]
    pub(crate) fn with_tables(input: &'a [u8], index: &'a Index, tables: &'a Tables) -> Doc<'a> {
        Doc {
            input,
            index,
            tables: Some(tables),
        }
    }

    pub fn input(&self) -> &'a [u8] {
        self.input
    }

    pub fn index(&self) -> &'a Index {
        self.index
    }

    #[inline]
    fn s(&self) -> &'a [u32] {
        &self.index.structurals
    }

    #[inline]
    fn byte(&self, c: Cursor) -> u8 {
        self.input.get(c.start as usize).copied().unwrap_or(b' ')
    }

    /// The value beginning at or after byte `p`, whose first structural
    /// candidate is `k`.
    #[inline(always)]
    fn value_at(&self, k: u32, p: usize, ord: u32) -> Cursor {
        Cursor {
            start: skip_ws(self.input, p) as u32,
            sidx: k,
            ord,
        }
    }

    /// [`Self::value_at`] with compact JSON's case, a value right at `p`
    /// (any byte above a space), tested here: the skip is called only over
    /// whitespace. For paths short enough that the call costs as much as
    /// the rest (a memo hit).
    #[inline(always)]
    fn value_after(&self, k: u32, p: usize, ord: u32) -> Cursor {
        match self.input.get(p) {
            Some(&b) if b > b' ' => Cursor {
                start: p as u32,
                sidx: k,
                ord,
            },
            _ => self.value_at(k, p, ord),
        }
    }

    /// The whole document.
    pub fn root(&self) -> Cursor {
        self.value_at(0, 0, 0)
    }

    /// Whether `c` starts at its structural (containers and strings).
    #[inline]
    fn at_structural(&self, c: Cursor) -> bool {
        self.s().get(c.sidx as usize).is_some_and(|&p| p == c.start)
    }

    /// Whether the value at `c` is a string: [`Self::type_of`]'s test of
    /// one type, without its dispatch.
    #[inline(always)]
    pub fn is_string(&self, c: Cursor) -> bool {
        self.byte(c) == b'"' && self.at_structural(c)
    }

    pub fn type_of(&self, c: Cursor) -> JsonType {
        match self.byte(c) {
            b'{' if self.at_structural(c) => JsonType::Object,
            b'[' if self.at_structural(c) => JsonType::Array,
            b'"' if self.at_structural(c) => JsonType::String,
            b't' | b'f' => JsonType::Bool,
            b'n' => JsonType::Null,
            _ => JsonType::Number,
        }
    }

    /// [`Self::len`] of a container (`c` an object or array cursor, as the
    /// edit writer's containers are): read without the type test.
    #[inline]
    pub fn container_len(&self, c: Cursor) -> u32 {
        self.index.containers[c.ord as usize].len
    }

    /// Number of children of an object or array (`Type` error otherwise).
    pub fn len(&self, c: Cursor) -> Result<usize, AccessError> {
        match self.type_of(c) {
            JsonType::Object | JsonType::Array => Ok(self.container_len(c) as usize),
            found => Err(AccessError::Type {
                expected: "object or array",
                found,
            }),
        }
    }

    /// [`Self::span`] of a container (`c` an object or array cursor, as
    /// the edit writer's containers and edited children are): its closer
    /// read from the container table, without the type test.
    #[inline]
    pub fn container_span(&self, c: Cursor) -> (usize, usize) {
        debug_assert!(matches!(
            self.type_of(c),
            JsonType::Object | JsonType::Array
        ));
        let close = self.index.containers[c.ord as usize].close as usize;
        (c.start as usize, self.s()[close] as usize + 1)
    }

    /// The byte range of the value.
    pub fn span(&self, c: Cursor) -> (usize, usize) {
        let start = c.start as usize;
        let end = match self.type_of(c) {
            JsonType::Object | JsonType::Array => {
                self.s()[self.index.containers[c.ord as usize].close as usize] as usize + 1
            }
            JsonType::String => {
                string_close(self.input, self.s(), c.sidx as usize).map_or(start + 1, |e| e + 1)
            }
            _ => trim_end(self.input, start, self.s()[c.sidx as usize] as usize),
        };
        (start, end)
    }

    /// Where the last child of container `c` ends (just after its opener
    /// when it has none): the place a child appended to it is written.
    /// Whitespace before the closer is not part of it.
    pub fn children_end(&self, c: Cursor) -> Result<usize, AccessError> {
        self.len(c)?;
        let close = self.s()[self.index.containers[c.ord as usize].close as usize] as usize;
        // Compact JSON (no whitespace before the closer) without the
        // 16-byte steps of `trim_end`.
        if close <= c.start as usize + 1 || !is_ws(self.input[close - 1]) {
            return Ok(close);
        }
        Ok(trim_end(self.input, c.start as usize + 1, close))
    }

    /// The original bytes of the value.
    pub fn raw(&self, c: Cursor) -> &'a [u8] {
        let (a, b) = self.span(c);
        &self.input[a..b]
    }

    /// The body (between the quotes) of the string at structural `k`.
    #[inline(always)]
    fn string_body(&self, k: u32) -> &'a [u8] {
        let open = self.s()[k as usize] as usize;
        let close = string_close(self.input, self.s(), k as usize).unwrap_or(open + 1);
        &self.input[open + 1..close]
    }

    fn decode_body(&self, body: &'a [u8]) -> Result<Cow<'a, str>, AccessError> {
        // `key_str` accepts any slice: one from elsewhere gets offsets
        // relative to itself rather than an arithmetic overflow.
        let base = (body.as_ptr() as usize)
            .checked_sub(self.input.as_ptr() as usize)
            .filter(|&b| b <= self.input.len())
            .unwrap_or(0);
        // Always the checking decoder: a strict index does not prove that
        // `self.input` is the input it was built from (`Doc::new` and
        // `Document` take any bytes safely), so a body's UTF-8 is checked
        // here even in a strict document.
        Ok(decode_str(body, base)?)
    }

    fn scalar_text(&self, c: Cursor) -> &'a [u8] {
        self.raw(c)
    }

    /// Decode the value at `c` (containers come back as cursors).
    pub fn value(&self, c: Cursor) -> Result<Value<'a>, AccessError> {
        Ok(match self.type_of(c) {
            JsonType::Object => Value::Object(c),
            JsonType::Array => Value::Array(c),
            JsonType::String => Value::String(self.decode_body(self.string_body(c.sidx))?),
            JsonType::Number => Value::Number(self.number(c)?),
            JsonType::Bool | JsonType::Null => {
                let text = self.scalar_text(c);
                match text {
                    b"true" => Value::Bool(true),
                    b"false" => Value::Bool(false),
                    b"null" => Value::Null,
                    _ => return Err(self.scalar_error(c)),
                }
            }
        })
    }

    /// The number at `c` (a `Type` error for any other value): what
    /// [`Self::value`] reads of a number, without its dispatch over every
    /// type (the typed getters' path).
    pub fn number_at(&self, c: Cursor) -> Result<Number<'a>, AccessError> {
        match self.type_of(c) {
            JsonType::Number => self.number(c),
            found => Err(AccessError::Type {
                expected: "number",
                found,
            }),
        }
    }

    /// The commonest scalars, read without building a [`Value`] (nor an
    /// error): a string, or an integer that [`Self::value`] reads as a short
    /// `i64`. `None` for every other value, and for a string that does not
    /// decode (which [`Self::value`] then reports); where `quick` answers,
    /// it answers as `value` would.
    #[inline(always)]
    pub fn quick(&self, c: Cursor) -> Option<Quick<'a>> {
        match self.byte(c) {
            b'"' if self.at_structural(c) => self
                .decode_body(self.string_body(c.sidx))
                .ok()
                .map(Quick::Str),
            b'-' | b'0'..=b'9' => self.short_int(c).map(Quick::Int),
            _ => None,
        }
    }

    /// The number at `c` when it is a plain decimal (`0.7`, `-12.5`, or an
    /// integer [`Self::quick`] leaves), read without the general path:
    /// [`plain_decimal`] over its bytes. `None` for every other value and
    /// number; where it answers, it answers as [`Self::value`] would (which
    /// reads the same bytes the same way, after `Self::short_int`).
    #[inline(always)]
    pub fn quick_decimal(&self, c: Cursor) -> Option<Number<'a>> {
        let start = c.start as usize;
        if !matches!(self.input.get(start)?, b'-' | b'0'..=b'9') {
            return None;
        }
        let end = trim_end(self.input, start, *self.s().get(c.sidx as usize)? as usize);
        plain_decimal(self.input, start, end)
    }

    /// The integer at `c` when it is the commonest kind, up to 16 digits
    /// ending at the next structural (`int_span`); `None` for every
    /// other value and number (a getter then takes the general path). Where
    /// it answers, it answers as [`Self::value`] would.
    #[inline(always)]
    pub fn span_int(&self, c: Cursor) -> Option<i64> {
        let e = *self.s().get(c.sidx as usize)? as usize;
        int_span(self.input, c.start as usize, e)
    }

    /// The number at `c` when [`Self::quick`] or [`Self::quick_decimal`]
    /// reads it, for a host that takes either (a view's read): the
    /// commonest, an integer of up to 19 digits ending at the next
    /// structural (`int_span`, `long_int_span`), inline; the rest out
    /// of line (`Self::quick_number_rest`: a plain decimal such as `0.7`,
    /// without the integer reader that looks for whitespace before it). `None` for every
    /// other value and number; where it answers, it answers as
    /// [`Self::value`] would (as both do).
    #[inline(always)]
    pub fn quick_number(&self, c: Cursor) -> Option<Number<'a>> {
        let e = *self.s().get(c.sidx as usize)? as usize;
        if let Some(v) = int_span(self.input, c.start as usize, e) {
            return Some(Number::Int(v));
        }
        // 17 to 19 digits (twitter.json's ids; anything shorter is turned
        // away by its length test).
        if let Some(v) = long_int_span(self.input, c.start as usize, e) {
            return Some(Number::Int(v));
        }
        self.quick_number_rest(c, e)
    }

    /// [`Self::quick_number`] of a number the span readers leave (`e`: the
    /// offset of the structural after it).
    #[inline(never)]
    fn quick_number_rest(&self, c: Cursor, e: usize) -> Option<Number<'a>> {
        let start = c.start as usize;
        if !matches!(self.input.get(start)?, b'-' | b'0'..=b'9') {
            return None;
        }
        let end = trim_end(self.input, start, e);
        if let Some(n) = plain_decimal(self.input, start, end) {
            return Some(n);
        }
        self.short_int_cold(c)
    }

    /// [`Self::short_int`] for [`Self::quick_number_rest`]: an integer the
    /// readers before it leave (whitespace after more than eight digits),
    /// rare, so out of line and apart from the decimal's code.
    #[cold]
    #[inline(never)]
    fn short_int_cold(&self, c: Cursor) -> Option<Number<'a>> {
        self.short_int(c).map(Number::Int)
    }

    #[inline(always)]
    fn number(&self, c: Cursor) -> Result<Number<'a>, AccessError> {
        match self.short_int(c) {
            Some(v) => Ok(Number::Int(v)),
            None => self.long_number(c),
        }
    }

    /// [`Self::number`] for everything but short integers (kept out of
    /// line, so that the common case sets up no frame for it): a plain
    /// decimal such as `0.7` in one read of its bytes (`plain_decimal`, as
    /// `loads` reads it: grammar checked, one exact division), anything
    /// else (and every error) through the full parser.
    #[inline(never)]
    fn long_number(&self, c: Cursor) -> Result<Number<'a>, AccessError> {
        let text = self.scalar_text(c);
        let start = c.start as usize;
        if let Some(n) = plain_decimal(self.input, start, start + text.len()) {
            return Ok(n);
        }
        parse_number(text, start).map_err(|_| self.scalar_error(c))
    }

    /// Cold path: the error for the scalar at `c` that does not read (only
    /// a lazy document holds one): what a strict parse reports for the same
    /// bytes, the first bad token's error, or for a good token followed by
    /// more (`[1 2]`, `[truex]`) the byte after it, as "Expecting ',' or
    /// ']'" (`}` in an object, extra data at the top level). The enclosing
    /// container is the one whose closer ends the first unmatched run of
    /// structurals after the scalar (an error path: a linear walk).
    #[cold]
    #[inline(never)]
    fn scalar_error(&self, c: Cursor) -> AccessError {
        let q = c.start as usize;
        let sk = q + self.scalar_text(c).len();
        let mut depth = 0usize;
        let mut after = ErrorKind::TrailingContent;
        for &at in &self.s()[c.sidx as usize..] {
            match self.input.get(at as usize) {
                Some(b'{' | b'[') => depth += 1,
                Some(&b) if b == b'}' || b == b']' => {
                    if depth == 0 {
                        after = if b == b'}' {
                            ErrorKind::ExpectedObjectCommaOrEnd
                        } else {
                            ErrorKind::ExpectedArrayCommaOrEnd
                        };
                        break;
                    }
                    depth -= 1;
                }
                _ => {}
            }
        }
        crate::index::scalar_gap_error(self.input, q, sk, after).into()
    }

    /// The common number, an integer of at most 19 digits (ids, counts),
    /// read straight from the input: digits up to the byte that ends the
    /// token. `None` for anything else (fractions, exponents, longer
    /// integers, a leading zero), which goes through the full parser. In a
    /// lazy document only `,`, `}` or `]` may end it (whitespace could hide
    /// garbage before the next structural, which the full parser reports).
    ///
    /// First the commonest case, up to 16 digits with nothing between them
    /// and the next structural ([`int_span`]), or 17 to 19 within `i64`
    /// ([`long_int_span`]: twitter.json's ids); then digits up to the first
    /// other byte (whitespace before the structural): 18 by
    /// [`leading_digits`], a 19th by one more step, within `i64` as the
    /// spans are (`signed`).
    #[inline(always)]
    fn short_int(&self, c: Cursor) -> Option<i64> {
        if let Some(&e) = self.s().get(c.sidx as usize) {
            let (start, e) = (c.start as usize, e as usize);
            if let Some(v) = int_span(self.input, start, e) {
                return Some(v);
            }
            if let Some(v) = long_int_span(self.input, start, e) {
                return Some(v);
            }
        }
        let t = self.input.get(c.start as usize..)?;
        let neg = t.first() == Some(&b'-');
        let t = &t[neg as usize..];
        let (v, mut i) = leading_digits(t);
        if i == 0 || (i > 1 && t[0] == b'0') {
            return None;
        }
        let mut m = v as u64;
        if i == 18 {
            // A 19th digit (below 10^19 < 2^64: no overflow), then the
            // bounds of `i64` (`signed`); a 20th goes to the exact path.
            if let Some(d @ 0..=9) = t.get(18).map(|b| b.wrapping_sub(b'0')) {
                m = m * 10 + u64::from(d);
                i = 19;
            }
        }
        match t.get(i) {
            Some(b',' | b'}' | b']') => {}
            Some(b' ' | b'\n' | b'\r' | b'\t') if !self.index.lazy => {}
            _ => return None,
        }
        signed(m, neg)
    }

    /// Resolve `path` relative to `at`.
    pub fn find(&self, at: Cursor, path: &str) -> Result<Cursor, AccessError> {
        match self.find_simple(at, path.as_bytes()) {
            Some(Ok(c)) => Ok(c),
            Some(Err(off)) => Err(AccessError::NotFound { at: off as usize }),
            None => self.find_parsed(at, path),
        }
    }

    /// [`Self::find`] through the path parser (every shape of path).
    pub(crate) fn find_parsed(&self, at: Cursor, path: &str) -> Result<Cursor, AccessError> {
        let mut cur = at;
        let mut segs = segments(path);
        while let Some(seg) = segs.next() {
            let (off, seg) = seg?;
            match self.step(cur, &seg) {
                Some(next) => cur = next,
                None if seg.is_wildcard() => return Err(crate::path::wildcard_error(off)),
                // A malformed path is reported as such even when an earlier
                // segment is missing (`a..b` on a document without `a`), and
                // so is a wildcard.
                None => match segs.find_map(|s| match s {
                    Err(e) => Some(e),
                    Ok((o, s)) => s.is_wildcard().then(|| crate::path::wildcard_error(o)),
                }) {
                    Some(e) => return Err(e),
                    None => return Err(AccessError::NotFound { at: off }),
                },
            }
        }
        Ok(cur)
    }

    /// [`Self::find`] for the most common shapes, bare keys joined by dots
    /// and plain indices (`id`, `user.login`, `[3].id`,
    /// `messages[12].content`, `a[-1]`), without the general path parser:
    /// one pass reads each segment straight from the path bytes and steps
    /// into it. `None`: another shape (a JSON Pointer, a quoted key, a
    /// wildcard, an index of more than 18 digits, a syntax error), left to
    /// the parser, which reports it.
    ///
    /// After a missing segment the rest of the path is still read (without
    /// lookups): the parser reports a malformed path (or a wildcard) as such
    /// even when an earlier segment is missing, so the answer is `NotFound`
    /// only when the whole path has the simple shape.
    ///
    /// `Some(Ok(c))`: the value; `Some(Err(off))`: `NotFound` at offset
    /// `off`. Hosts call it in their hottest reads, where it is inlined:
    /// the answer is 16 bytes, not an `AccessError` built and copied out
    /// through memory. Paths of 4 GiB or more go to the parser.
    #[inline(always)]
    pub(crate) fn find_simple(&self, at: Cursor, path: &[u8]) -> Option<Result<Cursor, u32>> {
        let n = path.len();
        // The root (""), a JSON Pointer and a leading '.' or wildcard go to
        // the parser.
        if matches!(path.first(), None | Some(b'/' | b'.' | b'*')) || n > u32::MAX as usize {
            return None;
        }
        // The commonest path, one short plain key (`id`): the words of its
        // `PlainKey` (its bytes in one word), tested for '.' and '[' at
        // once, then straight to the lookup with those words, without the
        // segment loop. Other short paths (a quote, a backslash, a
        // non-ASCII byte) take the loop, and so does an index (`[3]`,
        // tested first: it is no key).
        if n < 8 && path[0] != b'[' {
            if let Some(PlainKey::Short(p)) = PlainKey::new(path) {
                if !has_dot_or_bracket(p.key_word()) {
                    // (`type_of`'s object test written out: a second call
                    // of it here makes LLVM take it out of line in every
                    // getter.)
                    let object = self.byte(at) == b'{' && self.at_structural(at);
                    return Some(if object {
                        self.field_short(at, &p, path).ok_or(0)
                    } else {
                        Err(0)
                    });
                }
            }
        }
        // `Ok(c)`: the value so far; `Err(off)`: the segment at `off` is
        // missing.
        let mut cur: Result<Cursor, u32> = Ok(at);
        let mut i = 0;
        loop {
            let seg = i;
            let next = if path[i] == b'[' {
                let (index, end) = simple_index(path, i + 1)?;
                i = end;
                cur.ok().and_then(|c| match self.type_of(c) {
                    JsonType::Array => self.element_memo(c, index),
                    _ => None,
                })
            } else {
                // A bare key: up to the next '.' or '['.
                let end = key_end(path, i);
                let key = &path[i..end];
                i = end;
                cur.ok().and_then(|c| match self.type_of(c) {
                    JsonType::Object => self.field_memo(c, key),
                    _ => None,
                })
            };
            if cur.is_ok() {
                cur = next.ok_or(seg as u32);
            }
            match path.get(i) {
                None => break,
                Some(b'[') => {}
                // A '.' is followed by a bare key that is not a wildcard.
                Some(b'.') => {
                    i += 1;
                    if matches!(path.get(i), None | Some(b'.' | b'[' | b'*')) {
                        return None;
                    }
                }
                // After ']' only '.', '[' or the end.
                Some(_) => return None,
            }
        }
        Some(cur)
    }

    fn step(&self, c: Cursor, seg: &Segment<'_>) -> Option<Cursor> {
        match (self.type_of(c), seg) {
            (JsonType::Object, Segment::Key(k) | Segment::Token(k)) => self.field_memo(c, k),
            (JsonType::Array, Segment::Index(i)) => self.element_memo(c, *i),
            (JsonType::Array, Segment::Token(t)) => self.element_memo(c, pointer_index(t)?),
            _ => None,
        }
    }

    #[inline(always)]
    fn first_child(&self, c: Cursor) -> ChildPos {
        ChildPos {
            container: c.ord,
            i: 0,
            k: c.sidx + 1,
            ord: c.ord + 1,
        }
    }

    /// The value of the child at `pos` (for objects, the member's value).
    #[inline(always)]
    fn child_value(&self, pos: ChildPos, object: bool) -> Cursor {
        let s = self.s();
        if object {
            self.value_at(pos.k + 2, s[pos.k as usize + 1] as usize + 1, pos.ord)
        } else {
            self.value_at(pos.k, s[pos.k as usize - 1] as usize + 1, pos.ord)
        }
    }

    /// The position of the next child. Only valid while `pos.i + 1 < len`.
    #[inline(always)]
    fn advance(&self, pos: ChildPos, object: bool) -> ChildPos {
        // The value's first structural candidate. The index was built with
        // the structure checked (in both modes): only whitespace precedes a
        // string or container value, and a scalar is followed by `,` or the
        // closer, so the byte there tells the kind of the value.
        let s = self.s();
        let vk = if object { pos.k + 2 } else { pos.k } as usize;
        let (t, ord) = match self.input.get(s[vk] as usize) {
            Some(b'"') => (vk as u32 + 1, pos.ord),
            Some(b'{' | b'[') => {
                let c = &self.index.containers[pos.ord as usize];
                (c.close + 1, c.next)
            }
            _ => {
                // A branch rather than a select: see `skip_kind`.
                not_merged();
                (vk as u32, pos.ord)
            }
        };
        ChildPos {
            container: pos.container,
            i: pos.i + 1,
            k: t + 1,
            ord,
        }
    }

    /// Run `read` on the child table of container `c` (`Some`) or, while it
    /// has none, on `None`: `read` then walks the children and returns how
    /// many it walked with its answer. The table is built once the long
    /// walks into `c` (see `SHORT_WALK`) add up to its length: a container
    /// read once (a few fields of each of many objects) is cheaper to walk
    /// than to index.
    #[inline(always)]
    fn with_table<T>(
        &self,
        c: Cursor,
        object: bool,
        read: impl FnOnce(Option<&ChildTable>) -> (u32, T),
    ) -> T {
        self.with_known_table(c, object, self.recent_table(c), read)
    }

    /// The child table of container `c`, when one is published (see
    /// [`Tables::recent`]).
    #[inline(always)]
    fn recent_table(&self, c: Cursor) -> Option<&'a ChildTable> {
        self.tables.and_then(|t| t.recent(c.ord))
    }

    /// [`Self::with_table`] when the caller has looked for `c`'s table
    /// already (`table`: [`Self::recent_table`]'s answer).
    ///
    /// `read` is called in one place, so that it is inlined here (called
    /// from a branch per case, it stayed a function of its own: one more
    /// call, and its saved registers, on every lookup).
    #[inline(always)]
    fn with_known_table<T>(
        &self,
        c: Cursor,
        object: bool,
        table: Option<&ChildTable>,
        read: impl FnOnce(Option<&ChildTable>) -> (u32, T),
    ) -> T {
        let (walked, answer) = read(table);
        if walked >= SHORT_WALK && table.is_none() {
            if let Some(tables) = self.tables {
                if let Some(n) = tables.count(c.ord, walked, self.container_len(c)) {
                    self.count_walk(tables, c, object, n);
                }
            }
        }
        answer
    }

    /// Add a walk of `walked` children of `c` to its count; build its table
    /// once the count reaches its length. Publish the table, new or not.
    #[cold]
    #[inline(never)]
    fn count_walk(&self, tables: &Tables, c: Cursor, object: bool, walked: u32) {
        let mut map = tables.map.lock().unwrap_or_else(|e| e.into_inner());
        let slot = map
            .get_or_insert_with(HashMap::default)
            .entry(c.ord)
            .or_insert(TableSlot::Seen(0));
        match slot {
            TableSlot::Built(t) => tables.publish(t),
            TableSlot::Seen(seen) => {
                *seen = seen.saturating_add(walked);
                if *seen >= self.container_len(c) {
                    let t = Arc::new(self.build_table(c, object));
                    tables.publish(&t);
                    *slot = TableSlot::Built(t);
                }
            }
        }
    }

    fn build_table(&self, c: Cursor, object: bool) -> ChildTable {
        let len = self.container_len(c);
        let mut pos = Vec::with_capacity(len as usize);
        let mut p = self.first_child(c);
        for i in 0..len {
            pos.push(p);
            if i + 1 < len {
                p = self.advance(p, object);
            }
        }
        let mut undecodable = false;
        let keys = if !object {
            Keys::None
        } else if pos.len() <= PRINTS_MAX {
            let mut tags: Vec<u8> = pos
                .iter()
                .map(|p| {
                    let body = self.string_body(p.k);
                    if !self.index.lazy && !has_backslash(body) {
                        return print(first_word(self.input, body), body.len());
                    }
                    match self.decode_body(body) {
                        Ok(key) => print(word_of(key.as_bytes()), key.len()),
                        Err(_) => {
                            undecodable = true;
                            0
                        }
                    }
                })
                .map(tag)
                .collect();
            tags.resize(tags.len().next_multiple_of(TAG_GROUP), 0);
            Keys::Tags(tags)
        } else {
            let state = std::collections::hash_map::RandomState::new();
            let mut map = HashMap::with_capacity_and_hasher(len as usize, PassThrough);
            for (i, p) in pos.iter().enumerate() {
                let body = self.string_body(p.k);
                let h = match self.decode_body(body) {
                    Ok(key) => state.hash_one(key.as_bytes()),
                    Err(_) => {
                        undecodable = true;
                        continue;
                    }
                };
                map.entry(h).or_insert(i as u32);
            }
            Keys::Hashed(map, state)
        };
        ChildTable {
            ord: c.ord,
            pos,
            keys,
            undecodable,
        }
    }

    /// The value of member `key` (unescaped bytes) of object `c`; the first
    /// one when the key repeats. Objects of more than [`TABLE_MIN`] members
    /// are read through the document's memo once they have their child
    /// table (see `doc/memo.rs`: a view read again and again, `v["id"]` in
    /// a loop, costs one key test; a record read once pays no memo miss).
    pub fn field(&self, c: Cursor, key: &[u8]) -> Option<Cursor> {
        // The common lookup, a short plain key in a small object, walks
        // with the words of its `PlainKey` and nothing else set up.
        if self.container_len(c) <= TABLE_MIN {
            match PlainKey::new(key) {
                Some(PlainKey::Short(p)) => return self.walk_members(c, Plain(&p, key)).1,
                Some(PlainKey::Medium(p)) => return self.walk_members(c, Plain(&p, key)).1,
                None => {}
            }
            return self.field_general(c, key);
        }
        self.field_large(c, key)
    }

    /// The value of the first member of object `c` at or after the member
    /// whose key is structural `k` (`ord`: the ordinal of the first
    /// container at or after that member) whose key is `key` (unescaped
    /// bytes); `None` when no member from there on has it. The walk of
    /// [`Self::field`] started part way (any object size: no child table,
    /// no memo): each member is told from its opening quote by the key's
    /// words, without finding where its body ends (`doc/key.rs`). A `k`
    /// past the last member finds nothing; one that is not a member's key
    /// of `c` gives a wrong answer, never an out-of-bounds read.
    pub(crate) fn field_from(&self, c: Cursor, k: usize, ord: u32, key: &[u8]) -> Option<Cursor> {
        let from = MemberAt { k, ord, i: 0 };
        match PlainKey::new(key) {
            Some(PlainKey::Short(p)) => self.walk_members_from(c, from, &Plain(&p, key)).1,
            Some(PlainKey::Medium(p)) => self.walk_members_from(c, from, &Plain(&p, key)).1,
            None => {
                let m = KeyMatcher::new(self.input, self.index.lazy, key);
                self.walk_members_from(c, from, &AnyKey(&m)).1
            }
        }
    }

    /// [`Self::field`] in an object of more than [`TABLE_MIN`] members,
    /// past the memo: a plain key by its words ([`Self::large_plain`]),
    /// any other through [`Self::field_general`].
    /// (`table`: [`Self::recent_table`] of `c`, which the caller looked up.)
    #[inline(always)]
    fn large_lookup(&self, c: Cursor, key: &[u8], table: Option<&ChildTable>) -> Option<Cursor> {
        match PlainKey::new(key) {
            Some(PlainKey::Short(p)) => self.large_plain(c, &p, key, table),
            Some(PlainKey::Medium(p)) => self.large_plain(c, &p, key, table),
            None => self.field_general(c, key),
        }
    }

    /// [`Self::field`] of a plain key (its words `p`) in an object of more
    /// than [`TABLE_MIN`] members: through the object's table once it has
    /// one, else by a walk with the key's words (which counts towards the
    /// table, as [`Self::field_general`]'s does). Out of line, so that the
    /// small objects' walk keeps its registers.
    #[inline(never)]
    fn large_plain<T: PlainWords>(
        &self,
        c: Cursor,
        p: &T,
        key: &[u8],
        table: Option<&ChildTable>,
    ) -> Option<Cursor> {
        self.with_known_table(c, true, table, |t| match t {
            Some(t) => {
                let print = print(p.first(), key.len());
                (0, self.table_field(t, print, key, Plain(p, key)))
            }
            None => self.walk_resumed(c, Plain(p, key), key),
        })
    }

    /// [`Self::field`] of any key in any object: through the object's
    /// child table once it has one.
    #[inline(never)]
    fn field_general(&self, c: Cursor, key: &[u8]) -> Option<Cursor> {
        let len = self.container_len(c);
        let m = KeyMatcher::new(self.input, self.index.lazy, key);
        if len <= TABLE_MIN {
            return self.walk_field(c, &m).1;
        }
        self.with_table(c, true, |t| match t {
            // (`field` looks a short plain key up in a table itself,
            // with its words in registers.)
            Some(t) => (0, self.table_field(t, m.print(), m.key, AnyKey(&m))),
            None => self.walk_field(c, &m),
        })
    }

    /// [`Self::field`] by a walk over the members: (members walked, value).
    #[inline(always)]
    fn walk_field(&self, c: Cursor, m: &KeyMatcher<'_, '_>) -> (u32, Option<Cursor>) {
        if m.is_short() {
            self.walk_members(c, ShortKey(m))
        } else {
            self.walk_members(c, AnyKey(m))
        }
    }

    /// The first member of object `c` whose key passes `test`: (members
    /// walked, its value).
    ///
    /// A member's value is skipped by the kind of its first structural (see
    /// [`skip_value`]). Every member holds its key, its colon and one more
    /// structural (its value's first, or the `,` or closer after a scalar)
    /// at or before the object's closer, so the walk goes on while `k + 2`
    /// (`k`: the key's structural) is at or before the closer: that one
    /// compare per member bounds both reads of the structurals (the
    /// closer's position is clamped to the structurals once, so an index
    /// that is not the one built for the input cannot make them read out of
    /// bounds), and the loop keeps no count of members left. The loop runs
    /// the key's quick test only; a member it cannot tell leaves the loop
    /// for the slow test, and the walk goes on after it.
    ///
    /// The reads of the input are bounded once per walk too: the
    /// structurals of an index increase strictly (see [`Index`]), so every
    /// member's key and value start before the closer's byte; when at least
    /// [`UNCHECKED_READ`] bytes of the input follow that byte (every
    /// object but those ending in the input's last bytes), the key tests
    /// and the reads of the values' first bytes need no check of their own
    /// ([`scan_members`] with `CHECKED = false`).
    #[inline(always)]
    fn walk_members(&self, c: Cursor, test: impl MemberTest) -> (u32, Option<Cursor>) {
        let from = MemberAt {
            k: c.sidx as usize + 1,
            ord: c.ord + 1,
            i: 0,
        };
        let (walked, found, _) = self.walk_members_from(c, from, &test);
        (walked, found)
    }

    /// [`Self::walk_members`] from the member at `at` (its key's structural
    /// and the next container's ordinal; `at.i` counts the members walked):
    /// (members walked, the value, where the walk stopped: the hit's
    /// member, or past the last member). A start that is not a member key
    /// of `c` gives a wrong answer, never an out-of-bounds read (the scan
    /// bounds every read by the object's closer).
    #[inline(always)]
    fn walk_members_from(
        &self,
        c: Cursor,
        mut at: MemberAt,
        test: &impl MemberTest,
    ) -> (u32, Option<Cursor>, MemberAt) {
        let s = self.s();
        let containers = &self.index.containers;
        let Some(ct) = containers.get(c.ord as usize) else {
            return (0, None, at);
        };
        let Some(end) = s.len().checked_sub(1) else {
            return (0, None, at);
        };
        let last = (ct.close as usize).min(end);
        let input = self.input;
        // SAFETY: `last <= end < s.len()`.
        let close_at = unsafe { *s.get_unchecked(last) } as usize;
        let checked = close_at + UNCHECKED_READ > input.len();
        loop {
            // The scan: members the quick test tells apart, nothing else.
            let stop = if checked {
                // SAFETY: `last <= end < s.len()`.
                unsafe { scan_members::<true>(s, input, containers, last, test, &mut at) }
            } else {
                // SAFETY: `s[last] + UNCHECKED_READ <= input.len()` (just
                // tested), `last < s.len()`.
                unsafe { scan_members::<false>(s, input, containers, last, test, &mut at) }
            };
            let Some(hit) = stop else {
                return (at.i, None, at);
            };
            let k = at.k;
            if hit || test.slow(self, k) {
                let pos = ChildPos {
                    container: c.ord,
                    i: at.i,
                    k: k as u32,
                    ord: at.ord,
                };
                return (at.i + 1, Some(self.child_value(pos, true)), at);
            }
            // SAFETY: `k + 2 <= last < s.len()` (checked in the scan).
            let v = unsafe { *s.get_unchecked(k + 2) };
            (at.k, at.ord) = skip_value(input, containers, k + 2, v as usize, at.ord);
            at.i += 1;
        }
    }

    /// [`Self::field`] of `key`, whose [`print()`] is `print`, through an
    /// object's table; `test` is the key's test of a member ([`Plain`],
    /// [`ShortKey`] or [`AnyKey`]).
    #[inline(always)]
    fn table_field(
        &self,
        t: &ChildTable,
        print: u64,
        key: &[u8],
        test: impl MemberTest,
    ) -> Option<Cursor> {
        let s = self.s();
        let hit = |p: &ChildPos| {
            s.get(p.k as usize)
                .is_some_and(|&open| test.hit(self, p.k as usize, open as usize))
        };
        match &t.keys {
            Keys::Tags(tags) => {
                let want = tag(print);
                // Equal tags are candidates; the first whose key matches
                // wins. Tags are compared a group at a time.
                for g in 0..tags.len() / TAG_GROUP {
                    let mut bits = tag_mask(&tags[g * TAG_GROUP..][..TAG_GROUP], want);
                    while bits != 0 {
                        let j = g * TAG_GROUP + bits.trailing_zeros() as usize;
                        // (Past the children: the padding.)
                        let Some(p) = t.pos.get(j) else { break };
                        if hit(p) {
                            return Some(self.child_value(*p, true));
                        }
                        bits &= bits - 1;
                    }
                }
                if !t.undecodable {
                    return None;
                }
            }
            Keys::Hashed(map, state) => match map.get(&state.hash_one(key)) {
                Some(&i) => {
                    let p = t.pos[i as usize];
                    if hit(&p) {
                        return Some(self.child_value(p, true));
                    }
                }
                // No key hashes like this one, so no key equals it.
                None if !t.undecodable => return None,
                None => {}
            },
            Keys::None => {}
        }
        // A hash collision or an undecodable key: fall back to a scan.
        t.pos
            .iter()
            .find(|p| hit(p))
            .map(|&p| self.child_value(p, true))
    }

    /// Element `i` of array `c`; negative `i` counts from the end.
    pub fn element(&self, c: Cursor, i: i64) -> Option<Cursor> {
        let len = self.container_len(c);
        let i = if i < 0 { i.checked_add(len as i64)? } else { i };
        if i < 0 || i >= len as i64 {
            return None;
        }
        let i = i as u32;
        let walk = || {
            let mut p = self.first_child(c);
            while p.i < i {
                p = self.advance(p, false);
            }
            (i + 1, Some(self.child_value(p, false)))
        };
        if len <= TABLE_MIN {
            return walk().1;
        }
        self.with_table(c, false, |t| match t {
            Some(t) => (0, Some(self.child_value(t.pos[i as usize], false))),
            None => walk(),
        })
    }

    // Convenience: resolve then read.
    pub fn get(&self, at: Cursor, path: &str) -> Result<Value<'a>, AccessError> {
        self.value(self.find(at, path)?)
    }

    pub fn get_str(&self, at: Cursor, path: &str) -> Result<Cow<'a, str>, AccessError> {
        let c = self.find(at, path)?;
        match self.type_of(c) {
            JsonType::String => self.decode_body(self.string_body(c.sidx)),
            found => Err(AccessError::Type {
                expected: "string",
                found,
            }),
        }
    }

    pub fn get_number(&self, at: Cursor, path: &str) -> Result<Number<'a>, AccessError> {
        let c = self.find(at, path)?;
        match self.type_of(c) {
            JsonType::Number => self.number(c),
            found => Err(AccessError::Type {
                expected: "number",
                found,
            }),
        }
    }

    pub fn get_i64(&self, at: Cursor, path: &str) -> Result<i64, AccessError> {
        match self.get_number(at, path)? {
            Number::Int(v) => Ok(v),
            _ => Err(AccessError::Type {
                expected: "integer in the i64 range",
                found: JsonType::Number,
            }),
        }
    }

    pub fn get_f64(&self, at: Cursor, path: &str) -> Result<f64, AccessError> {
        Ok(match self.get_number(at, path)? {
            Number::Int(v) => v as f64,
            Number::BigInt(t) => t.parse::<f64>().unwrap_or(f64::NAN),
            Number::Float(v) => v,
        })
    }

    pub fn get_bool(&self, at: Cursor, path: &str) -> Result<bool, AccessError> {
        let c = self.find(at, path)?;
        // The type first: a lazily malformed value of another type is a
        // type mismatch, as in the other typed getters.
        match self.type_of(c) {
            JsonType::Bool => match self.value(c)? {
                Value::Bool(b) => Ok(b),
                _ => Err(self.scalar_error(c)),
            },
            found => Err(AccessError::Type {
                expected: "bool",
                found,
            }),
        }
    }

    /// Children of an array, in order.
    pub fn array_items(&self, c: Cursor) -> Result<ArrayItems<'a>, AccessError> {
        match self.type_of(c) {
            JsonType::Array => Ok(ArrayItems(Children::new(*self, c, false))),
            found => Err(AccessError::Type {
                expected: "array",
                found,
            }),
        }
    }

    /// The element the walk `at` stands at ([`ArrayItems::at`], over an
    /// array of this document), with `at` stepped past it: one step of
    /// [`ArrayItems`], inlined into a host's iterator (one element per call
    /// from Python).
    #[inline(always)]
    pub fn next_item(&self, at: &mut ItemsAt) -> Option<Cursor> {
        if at.left == 0 {
            return None;
        }
        let p = at.pos;
        at.left -= 1;
        if at.left > 0 {
            at.pos = self.advance(p, false);
        }
        Some(self.child_value(p, false))
    }

    /// Members of an object, in order: (raw key body, value).
    pub fn object_items(&self, c: Cursor) -> Result<ObjectItems<'a>, AccessError> {
        match self.type_of(c) {
            JsonType::Object => Ok(ObjectItems(Children::new(*self, c, true))),
            found => Err(AccessError::Type {
                expected: "object",
                found,
            }),
        }
    }

    /// Decode a raw key body returned by `object_items`.
    pub fn key_str(&self, raw_key: &'a [u8]) -> Result<Cow<'a, str>, AccessError> {
        self.decode_body(raw_key)
    }

    /// The members of object `c` in order, without the later occurrences
    /// of a repeated key (the first one wins, as in reads). A small object
    /// compares each key with the ones before it as the walk goes; a larger
    /// one has its repeats found first, by sorted fingerprints
    /// (`doc/repeats.rs`: no hash set).
    pub fn distinct_items(&self, c: Cursor) -> Result<DistinctItems<'a>, AccessError> {
        let items = self.object_items(c)?;
        let n = items.size_hint().0;
        Ok(DistinctItems {
            doc: *self,
            items,
            i: 0,
            seen: if n <= SEEN_PAIRWISE_MAX {
                Seen::Pairwise(Pairwise {
                    keys: [&[]; SEEN_PAIRWISE_MAX],
                    len: 0,
                    escaped: false,
                })
            } else {
                Seen::Sorted(repeats::later(self, c)?, 0)
            },
        })
    }

    /// Whether no key of object `c` repeats (after unescaping). A small
    /// object of a strict document, the common case (a dumps of an edited
    /// object asks it), is one lean walk over its keys
    /// (`repeats::small_keys`); a larger one is checked by sorted
    /// fingerprints, anything else by the general walk.
    pub fn keys_unique(&self, c: Cursor) -> Result<bool, AccessError> {
        if let Some(unique) = repeats::small_keys(self, c, |_, _| ()) {
            return Ok(unique);
        }
        let n = self.len(c)?;
        if n <= 1 {
            self.object_items(c)?;
            return Ok(true);
        }
        if n > SEEN_PAIRWISE_MAX {
            self.object_items(c)?;
            return repeats::keys_unique(self, c);
        }
        let mut distinct = 0;
        for m in self.distinct_items(c)? {
            m?;
            distinct += 1;
        }
        Ok(distinct == n)
    }

    /// A key as compared for repeats: its unescaped UTF-8 bytes. In a strict
    /// document a body without a backslash is exactly that already.
    pub(crate) fn key_identity(&self, raw: &'a [u8]) -> Result<Cow<'a, [u8]>, AccessError> {
        if !self.index.lazy && !has_backslash(raw) {
            return Ok(Cow::Borrowed(raw));
        }
        Ok(match self.decode_body(raw)? {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        })
    }
}

/// Where the bare key starting at `i` in `path` ends: the offset of the
/// first `.` or `[` at or after `i`, or `path.len()`.
///
/// In a path of eight bytes or more, eight bytes at a time (SWAR): a word
/// of the path is compared with `.` and `[` in every byte at once, and the
/// lowest byte that matches is the answer. The test (`(x - 0x01..) & !x &
/// 0x80..` for `x` the word XOR the byte) can flag a byte above a true
/// match (a borrow), never below one, so the lowest flag is exact. The
/// tail (fewer than eight bytes left) is the path's last eight bytes
/// shifted down past the ones already read. A shorter path is read a byte
/// at a time (a word would have to be assembled from pieces, which costs
/// more than the loop over a key of a few bytes: `id`, `name`).
#[inline(always)]
fn key_end(path: &[u8], i: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let n = path.len();
    if n < 8 {
        return path[i..]
            .iter()
            .position(|&b| b == b'.' || b == b'[')
            .map_or(n, |p| i + p);
    }
    let first = |w: u64| {
        let d = w ^ (LO * u64::from(b'.'));
        let b = w ^ (LO * u64::from(b'['));
        let f = (d.wrapping_sub(LO) & !d | b.wrapping_sub(LO) & !b) & HI;
        (f != 0).then(|| (f.trailing_zeros() / 8) as usize)
    };
    let mut j = i;
    while j + 8 <= n {
        let w = u64::from_le_bytes(path[j..j + 8].try_into().expect("8 bytes"));
        if let Some(k) = first(w) {
            return j + k;
        }
        j += 8;
    }
    if j == n {
        return n;
    }
    // The last eight bytes, those before `j` shifted out (zeros come in
    // above, and match neither byte).
    let w = u64::from_le_bytes(path[n - 8..].try_into().expect("8 bytes")) >> (8 * (8 - (n - j)));
    first(w).map_or(n, |k| j + k)
}

/// Whether word `w` (path bytes, zeros past their end) holds a '.' or a
/// '[': the has-a-zero-byte test of the word xor each, exact as a yes/no
/// (its false positives sit only above a true zero byte).
#[inline(always)]
fn has_dot_or_bracket(w: u64) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let d = w ^ (LO * u64::from(b'.'));
    let b = w ^ (LO * u64::from(b'['));
    (d.wrapping_sub(LO) & !d | b.wrapping_sub(LO) & !b) & HI != 0
}

/// A plain index in a path, `-?(0|[1-9][0-9]{0,17})` then `]`, starting at
/// `p` (just after the `[`): its value and the offset after the `]`. `None`
/// for anything else (a quoted key, a wildcard, a longer index, a syntax
/// error: the path parser's cases).
#[inline(always)]
fn simple_index(path: &[u8], p: usize) -> Option<(i64, usize)> {
    let neg = *path.get(p)? == b'-';
    let d0 = p + usize::from(neg);
    // The digits and their value in one pass (18 digits fit an i64).
    let mut close = d0;
    let mut v = 0i64;
    while let Some(&b) = path.get(close) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if close - d0 == 18 {
            return None;
        }
        v = v * 10 + i64::from(d);
        close += 1;
    }
    // No digits, or a leading zero.
    if close == d0 || (close - d0 > 1 && path[d0] == b'0') {
        return None;
    }
    if path.get(close) != Some(&b']') {
        return None;
    }
    Some((if neg { -v } else { v }, close + 1))
}

/// A JSON Pointer token as an array index: `0` or a digit string without a
/// leading zero. `-` (past the end) and anything else are not found.
fn pointer_index(t: &[u8]) -> Option<i64> {
    if t.is_empty()
        || (t.len() > 1 && t[0] == b'0')
        || !t.iter().all(u8::is_ascii_digit)
        || t.len() > 18
    {
        return None;
    }
    std::str::from_utf8(t).ok()?.parse().ok()
}

struct Children<'a> {
    doc: Doc<'a>,
    pos: ChildPos,
    left: u32,
    object: bool,
}

impl<'a> Children<'a> {
    fn new(doc: Doc<'a>, c: Cursor, object: bool) -> Self {
        Children {
            doc,
            pos: doc.first_child(c),
            left: doc.container_len(c),
            object,
        }
    }
    #[inline]
    fn next_pos(&mut self) -> Option<ChildPos> {
        if self.left == 0 {
            return None;
        }
        let p = self.pos;
        self.left -= 1;
        if self.left > 0 {
            self.pos = self.doc.advance(p, self.object);
        }
        Some(p)
    }
}

/// Iterator over an array's elements.
pub struct ArrayItems<'a>(Children<'a>);

/// Where an [`ArrayItems`] stands, without the borrow of its document: a
/// host's iterator keeps it between steps (a Python iterator object lives
/// apart from the document's borrow) and steps it with [`Doc::next_item`]
/// on the same document.
#[derive(Debug, Clone, Copy)]
pub struct ItemsAt {
    pos: ChildPos,
    left: u32,
}

impl ArrayItems<'_> {
    /// Where this iterator stands (see [`ItemsAt`]).
    pub fn at(&self) -> ItemsAt {
        ItemsAt {
            pos: self.0.pos,
            left: self.0.left,
        }
    }
}

impl<'a> Iterator for ArrayItems<'a> {
    type Item = Cursor;
    fn next(&mut self) -> Option<Cursor> {
        let p = self.0.next_pos()?;
        Some(self.0.doc.child_value(p, false))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.0.left as usize, Some(self.0.left as usize))
    }
}

/// Iterator over an object's members: (raw key body, value).
pub struct ObjectItems<'a>(Children<'a>);

impl<'a> Iterator for ObjectItems<'a> {
    type Item = (&'a [u8], Cursor);
    fn next(&mut self) -> Option<Self::Item> {
        let p = self.0.next_pos()?;
        Some((self.0.doc.string_body(p.k), self.0.doc.child_value(p, true)))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.0.left as usize, Some(self.0.left as usize))
    }
}

/// How [`Doc::walk_members`] tests a member's key: one generic loop, one
/// copy per kind of key (a trait rather than a closure, so that the test
/// is inlined into the loop).
trait MemberTest {
    /// Whether the key whose opening quote is at byte `open` of `input` is
    /// the one sought, when the test can tell from there alone (`None`:
    /// ask [`Self::slow`]). The member walk's loop runs this test only: a
    /// member it cannot tell leaves the loop for the slow test.
    fn quick(&self, input: &[u8], open: usize) -> Option<bool>;
    /// [`Self::quick`] without bounds checks on its reads of the input.
    ///
    /// # Safety
    ///
    /// `open + UNCHECKED_READ <= input.len()`.
    #[inline(always)]
    unsafe fn quick_unchecked(&self, input: &[u8], open: usize) -> Option<bool> {
        self.quick(input, open)
    }
    /// Whether the key at structural `k` is the one sought (the members
    /// [`Self::quick`] cannot tell).
    fn slow(&self, doc: &Doc<'_>, k: usize) -> bool;
    /// Whether the key at structural `k`, whose opening quote is at byte
    /// `open`, is the one sought.
    #[inline(always)]
    fn hit(&self, doc: &Doc<'_>, k: usize, open: usize) -> bool {
        match self.quick(doc.input, open) {
            Some(hit) => hit,
            None => self.slow(doc, k),
        }
    }
}

/// A short plain key ([`KeyMatcher::is_short`]).
struct ShortKey<'m, 'i, 'k>(&'m KeyMatcher<'i, 'k>);

impl MemberTest for ShortKey<'_, '_, '_> {
    #[inline(always)]
    fn quick(&self, _: &[u8], open: usize) -> Option<bool> {
        self.0.short_at(open)
    }
    #[inline(always)]
    fn slow(&self, doc: &Doc<'_>, k: usize) -> bool {
        self.0.matches(doc.string_body(k as u32))
    }
}

/// A short plain key ([`PlainKey`]); a member its words cannot tell
/// (an escape, the end of the input near) is compared by [`KeyMatcher`],
/// made for that member only.
struct Plain<'p, 'k, T>(&'p T, &'k [u8]);

impl<T: WordTest> MemberTest for Plain<'_, '_, T> {
    #[inline(always)]
    fn quick(&self, input: &[u8], open: usize) -> Option<bool> {
        self.0.test(input, open)
    }
    #[inline(always)]
    unsafe fn quick_unchecked(&self, input: &[u8], open: usize) -> Option<bool> {
        // SAFETY: the caller's `open + UNCHECKED_READ <= input.len()` is
        // `test_unchecked`'s contract.
        unsafe { self.0.test_unchecked(input, open) }
    }
    #[inline(always)]
    fn slow(&self, doc: &Doc<'_>, k: usize) -> bool {
        plain_fallback(doc, self.1, k)
    }
}

/// [`Plain`]'s test of the member whose key is structural `k`, by its body.
#[cold]
#[inline(never)]
fn plain_fallback(doc: &Doc<'_>, key: &[u8], k: usize) -> bool {
    KeyMatcher::new(doc.input, doc.index.lazy, key).matches(doc.string_body(k as u32))
}

/// Any key.
struct AnyKey<'m, 'i, 'k>(&'m KeyMatcher<'i, 'k>);

impl MemberTest for AnyKey<'_, '_, '_> {
    #[inline(always)]
    fn quick(&self, _: &[u8], open: usize) -> Option<bool> {
        self.0.quick_at(open)
    }
    #[inline(always)]
    fn slow(&self, doc: &Doc<'_>, k: usize) -> bool {
        self.0.matches(doc.string_body(k as u32))
    }
}

/// Objects with at most this many members find repeated keys by comparing
/// each key with the ones before it; larger ones by sorted fingerprints
/// ([`repeats`]).
const SEEN_PAIRWISE_MAX: usize = repeats::SMALL;

/// Powers of ten up to 10^8.
const POW10: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// The member after the one whose key is structural `k` of an object
/// (`ord`: the ordinal of the next container at or after that member's
/// value): its key's structural and the next container's ordinal, or
/// `None` past the structurals. The value is skipped by the kind of its
/// first structural: a string is one structural, a container jumps past
/// its closer through the container table, a scalar has none of its own
/// (the structural there is the `,` or the closer after it). Inlined into
/// each member walk, whose loop keeps `k` and `ord` in registers.
#[inline(always)]
pub(crate) fn next_member(
    s: &[u32],
    input: &[u8],
    containers: &[crate::index::Container],
    k: usize,
    ord: u32,
) -> Option<(usize, u32)> {
    let vk = k + 2;
    let &v = s.get(vk)?;
    Some(skip_value(input, containers, vk, v as usize, ord))
}

/// [`next_member`] once the structural `vk` after a key's colon is read
/// (its byte offset `v`): the next key's structural and the next
/// container's ordinal.
///
/// A branch on "is this a container" first: a string or a scalar (most
/// values) takes the next structural without touching the container
/// table; only a container loads its entry (a bounds check and a 16-byte
/// read). An earlier version computed both sides and selected, which
/// loaded the entry for every value.
#[inline(always)]
fn skip_value(
    input: &[u8],
    containers: &[crate::index::Container],
    vk: usize,
    v: usize,
    ord: u32,
) -> (usize, u32) {
    let b = input.get(v).copied().unwrap_or(b' ');
    skip_kind(b, containers, vk, ord)
}

/// [`skip_value`] once the value's first byte `b` is read.
#[inline(always)]
fn skip_kind(b: u8, containers: &[crate::index::Container], vk: usize, ord: u32) -> (usize, u32) {
    // `{` and `[` differ only in bit 0x20.
    if b | 0x20 == b'{' {
        let ct = containers.get(ord as usize).copied().unwrap_or_default();
        // (`max`: an index that is not this input's, a misuse `Doc::new`'s
        // contract allows to give wrong answers but not to hang, could
        // point a container's close before its open; the walk still moves
        // on.)
        ((ct.close as usize + 2).max(vk + 1), ct.next)
    } else if b == b'"' {
        (vk + 2, ord)
    } else {
        // A branch, not `vk + 1 + (b == '"')`: the next member's position
        // then depends on the branch, which the predictor learns from the
        // records' shapes (the same kinds in the same order), rather than
        // on the loads of the structural and of its byte: the walk no
        // longer waits for those loads member after member. (The empty
        // block stops LLVM from merging the two arms back into that sum.)
        not_merged();
        (vk + 1, ord)
    }
}

/// A point the optimizer does not merge across (see [`skip_kind`]): an
/// empty assembly block where one is allowed, nothing elsewhere.
#[inline(always)]
fn not_merged() {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: an empty block: it reads and writes no memory, no register,
    // no flag, and uses no stack.
    unsafe {
        std::arch::asm!("", options(nomem, nostack, preserves_flags));
    }
}

/// Where a member walk is: the member's key structural `k`, the ordinal
/// `ord` of the next container at or after its value, the members `i`
/// walked before it.
struct MemberAt {
    k: usize,
    ord: u32,
    i: u32,
}

/// The inner loop of [`Doc::walk_members`]: from the member at `at`, the
/// members `test`'s quick test tells apart, up to the object's closer at
/// structural `last`. `None`: no member left; `Some(hit)`: the member at
/// `at` is the key (`true`) or needs the slow test (`false`).
///
/// With `CHECKED = false`, the quick test and the value's first byte are
/// read without bounds checks.
///
/// # Safety
///
/// `last < s.len()`; with `CHECKED = false` also `s[last] + UNCHECKED_READ
/// <= input.len()` (and the structurals increase strictly, as every
/// [`Index`]'s do).
#[inline(always)]
unsafe fn scan_members<const CHECKED: bool>(
    s: &[u32],
    input: &[u8],
    containers: &[crate::index::Container],
    last: usize,
    test: &impl MemberTest,
    at: &mut MemberAt,
) -> Option<bool> {
    let (mut k, mut ord, mut i) = (at.k, at.ord, at.i);
    let stop = loop {
        if k + 2 > last {
            break None;
        }
        // SAFETY: `k < k + 2 <= last < s.len()`.
        let open = unsafe { *s.get_unchecked(k) } as usize;
        let quick = if CHECKED {
            test.quick(input, open)
        } else {
            // SAFETY: `k < last` and the structurals increase, so `open <
            // s[last]`, and `s[last] + UNCHECKED_READ <= input.len()`.
            unsafe { test.quick_unchecked(input, open) }
        };
        match quick {
            Some(false) => {}
            Some(true) => break Some(true),
            None => break Some(false),
        }
        // SAFETY: as above, `k + 2 <= last < s.len()`.
        let v = unsafe { *s.get_unchecked(k + 2) } as usize;
        (k, ord) = if CHECKED {
            skip_value(input, containers, k + 2, v, ord)
        } else {
            // SAFETY: `k + 2 <= last`, so `v <= s[last] < input.len()`.
            unsafe { skip_value_unchecked(input, containers, k + 2, v, ord) }
        };
        i += 1;
    };
    (at.k, at.ord, at.i) = (k, ord, i);
    stop
}

/// [`skip_value`] without the bounds check on the value's first byte.
///
/// # Safety
///
/// `v < input.len()`.
#[inline(always)]
unsafe fn skip_value_unchecked(
    input: &[u8],
    containers: &[crate::index::Container],
    vk: usize,
    v: usize,
    ord: u32,
) -> (usize, u32) {
    debug_assert!(v < input.len());
    // SAFETY: the caller's `v < input.len()`.
    let b = unsafe { *input.get_unchecked(v) };
    skip_kind(b, containers, vk, ord)
}

/// The value and the number of the leading ASCII digits of `t`, at most 18
/// of them (the caller looks at the byte after them).
///
/// Eight bytes at a time while eight remain: XOR with `'0'` turns digits
/// into 0..=9 and every other byte into something larger; a byte is a digit
/// when its low seven bits plus 0x76 stay below 0x80 and its top bit is
/// clear (no carry leaves a byte), so the first non-digit is the lowest set
/// top bit. The leading digits are shifted to the top of the word (the
/// bytes below become leading zeros) and combined by three multiplies
/// (pairs, quads, then the eight digits). The input's last bytes go one at
/// a time.
#[inline(always)]
fn leading_digits(t: &[u8]) -> (i64, usize) {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    const TOP: u64 = 0x8080_8080_8080_8080;
    let mut v = 0u64;
    let mut i = 0;
    while i < 18 {
        let Some(chunk) = t.get(i..i + 8) else { break };
        let x = u64::from_le_bytes(chunk.try_into().expect("eight bytes")) ^ 0x3030_3030_3030_3030;
        let not_digit = (((x & LOW7) + 0x7676_7676_7676_7676) | x) & TOP;
        let n = ((not_digit.trailing_zeros() / 8) as usize).min(18 - i);
        if n == 0 {
            return (v as i64, i);
        }
        v = v * POW10[n] + eight_digits(x << (8 * (8 - n)));
        i += n;
        if n < 8 {
            return (v as i64, i);
        }
    }
    while i < 18 {
        match t.get(i).map(|b| b.wrapping_sub(b'0')) {
            Some(d @ 0..=9) => v = v * 10 + u64::from(d),
            _ => break,
        }
        i += 1;
    }
    (v as i64, i)
}

/// The integer written by all the bytes `input[start..end]`: an optional
/// `-` and 1 to 16 digits without a leading zero; `None` for anything else
/// (or when fewer than eight bytes follow the first digit).
///
/// The digits are read as one or two little-endian words, without a loop:
/// the word at the first digit shifted left by the bytes past the number
/// (so they drop out and leading zero digits come in), and, beyond eight
/// digits, the word of the last eight. A word holds only digits when no
/// byte, xor `'0'`, exceeds 9 (see [`leading_digits`]).
#[inline(always)]
fn int_span(input: &[u8], start: usize, end: usize) -> Option<i64> {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    const TOP: u64 = 0x8080_8080_8080_8080;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let word = |at: usize| {
        input
            .get(at..at + 8)
            .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")) ^ ZEROS)
    };
    let digits = |x: u64| (((x & LOW7) + 0x7676_7676_7676_7676) | x) & TOP == 0;
    let neg = *input.get(start)? == b'-';
    let p = start + neg as usize;
    let n = end.checked_sub(p)?;
    if n == 0 || n > 16 || (n > 1 && input[p] == b'0') {
        return None;
    }
    let first = word(p)?;
    let v = if n <= 8 {
        let x = first << (8 * (8 - n));
        if !digits(x) {
            return None;
        }
        eight_digits(x)
    } else {
        let hi = first << (8 * (16 - n));
        let lo = word(p + n - 8)?;
        if !digits(hi) || !digits(lo) {
            return None;
        }
        eight_digits(hi) * 100_000_000 + eight_digits(lo)
    } as i64;
    Some(if neg { -v } else { v })
}

/// The number written by eight digit values (0..=9, one per byte, the first
/// in the lowest byte).
#[inline(always)]
fn eight_digits(x: u64) -> u64 {
    let x = (x.wrapping_mul(10 << 8 | 1) >> 8) & 0x00FF_00FF_00FF_00FF;
    let x = (x.wrapping_mul(100 << 16 | 1) >> 16) & 0x0000_FFFF_0000_FFFF;
    x.wrapping_mul(10_000 << 32 | 1) >> 32
}

/// How [`DistinctItems`] knows a repeat. The small variant is large on
/// purpose: its keys live on the stack, no allocation per walk.
#[allow(clippy::large_enum_variant)]
enum Seen<'a> {
    /// The keys met so far (small objects).
    Pairwise(Pairwise<'a>),
    /// The ordinals of the repeating members, found before the walk, and
    /// how many of them the walk has passed (large objects).
    Sorted(repeats::Later, usize),
}

/// The raw keys of a small object met so far, on the stack. Once a key with
/// an escape turns up (or in a lazy document), keys are compared decoded.
struct Pairwise<'a> {
    keys: [&'a [u8]; SEEN_PAIRWISE_MAX],
    len: usize,
    escaped: bool,
}

impl<'a> Pairwise<'a> {
    /// Record `raw`; false when an earlier key equals it.
    #[inline]
    fn insert(&mut self, doc: &Doc<'a>, raw: &'a [u8]) -> Result<bool, AccessError> {
        self.escaped |= doc.index.lazy || has_backslash(raw);
        let seen = &self.keys[..self.len];
        let repeat = if self.escaped {
            let key = doc.key_identity(raw)?;
            let mut repeat = false;
            for &k in seen {
                if doc.key_identity(k)? == key {
                    repeat = true;
                    break;
                }
            }
            repeat
        } else {
            seen.contains(&raw)
        };
        if !repeat {
            self.keys[self.len] = raw;
            self.len += 1;
        }
        Ok(!repeat)
    }
}

/// Iterator over the members of an object without repeated keys:
/// (ordinal among all members, raw key body, value). A key is compared by
/// its raw bytes unless it holds an escape (or the document is lazy), then
/// decoded; an undecodable key is an error.
pub struct DistinctItems<'a> {
    doc: Doc<'a>,
    items: ObjectItems<'a>,
    /// Ordinal of the next member among all members.
    i: u32,
    seen: Seen<'a>,
}

impl<'a> Iterator for DistinctItems<'a> {
    type Item = Result<(u32, &'a [u8], Cursor), AccessError>;
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (raw, c) = self.items.next()?;
            let i = self.i;
            self.i += 1;
            let new = match &mut self.seen {
                Seen::Pairwise(p) => p.insert(&self.doc, raw),
                Seen::Sorted(later, passed) => {
                    let repeat = later.get(*passed) == Some(&i);
                    *passed += usize::from(repeat);
                    Ok(!repeat)
                }
            };
            match new {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => return Some(Err(e)),
            }
            return Some(Ok((i, raw, c)));
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, self.items.size_hint().1)
    }
}

/// A resumable walk over the children of an object or array, as plain data
/// (`Copy`, no lifetime), for hosts that keep the position between calls the
/// way they keep a [`Cursor`] (the C ABI's `qjson_iter`). Start one with
/// [`Doc::walk`], step it with [`Doc::walk_next`].
#[derive(Debug, Clone, Copy)]
pub struct ChildWalk {
    pos: ChildPos,
    left: u32,
    /// 1 for an object, 0 for an array. A `u32` rather than a `bool`: a
    /// C caller may hand back any bytes as a walk, and every bit pattern
    /// of a `u32` is a valid value (a forged walk can only panic).
    object: u32,
}

impl<'a> Doc<'a> {
    /// A walk over the children of `c` (`Type` error for scalars).
    pub fn walk(&self, c: Cursor) -> Result<ChildWalk, AccessError> {
        let object = match self.type_of(c) {
            JsonType::Object => true,
            JsonType::Array => false,
            found => {
                return Err(AccessError::Type {
                    expected: "object or array",
                    found,
                })
            }
        };
        Ok(ChildWalk {
            pos: self.first_child(c),
            left: self.container_len(c),
            object: object as u32,
        })
    }

    /// The next child of a walk: for objects (raw key body, value), for
    /// arrays (`None`, element). `None` at the end. A walk from another
    /// document is a logic error (wrong answers or a panic), never unsound.
    pub fn walk_next(&self, w: &mut ChildWalk) -> Option<(Option<&'a [u8]>, Cursor)> {
        if w.left == 0 {
            return None;
        }
        let p = w.pos;
        w.left -= 1;
        if w.left > 0 {
            w.pos = self.advance(p, w.object != 0);
        }
        let key = (w.object != 0).then(|| self.string_body(p.k));
        Some((key, self.child_value(p, w.object != 0)))
    }
}

/// Comparing keys with raw key bodies.
mod key;
/// Wildcard reads and reads by a compiled path.
mod matches;
// The memo of the last path steps into a few containers (its docs: memo.rs;
// an outer doc comment here would make rustdoc resolve its links in this scope).
mod memo;
// Repeated keys of large objects, by sorted fingerprints (docs: repeats.rs).
pub(crate) mod repeats;

use key::{
    first_word, has_backslash, print, tag, tag_mask, word_of, KeyMatcher, PlainKey, PlainWords,
    WordTest, TAG_GROUP, UNCHECKED_READ,
};

#[cfg(test)]
mod tests {
    use super::{
        has_dot_or_bracket, int_span, key_end, leading_digits, word_of, Cursor, Doc, Number, Quick,
        Value,
    };
    use crate::error::AccessError;
    use crate::index::{Index, Options};

    /// The member walk bounds its reads once per walk (the object's
    /// closer [`super::UNCHECKED_READ`] bytes or more before the end of
    /// the input) or per member: objects ending at every distance from the
    /// end, keys of every word length (escaped too), found, missed and
    /// read by `find_all` over an array of them, agree with the object's
    /// keys.
    #[test]
    fn member_walks_at_every_distance_from_the_end_of_the_input() {
        for n in 1..=17usize {
            let key = "k".repeat(n);
            let near = format!("{}j", "k".repeat(n - 1));
            let escaped = format!("\\u006b{}", "k".repeat(n - 1));
            for pad in 0..=24usize {
                for (body, found) in [
                    (
                        format!("\"a\":0,\"{near}\":1,\"{key}\":2"),
                        Some(b"2".as_slice()),
                    ),
                    (
                        format!("\"{key}\":{{\"x\":3}},\"b\":[4]"),
                        Some(b"{\"x\":3}"),
                    ),
                    (format!("\"{escaped}\":5"), Some(b"5")),
                    (format!("\"a\":0,\"{key}\" :8"), Some(b"8")),
                    (format!("\"{near}\" :0,\"{key}\"\n:9"), Some(b"9")),
                    (format!("\"{near}\":\"6\",\"{key}x\":7"), None),
                ] {
                    let text = format!("{{{body}}}{}", " ".repeat(pad));
                    let rows = format!("[{text},{text}]{}", " ".repeat(pad));
                    for lazy in [false, true] {
                        let opts = Options {
                            lazy,
                            ..Options::default()
                        };
                        let index = Index::build(text.as_bytes(), &opts).unwrap();
                        let doc = Doc::new(text.as_bytes(), &index);
                        let got = doc.field(doc.root(), key.as_bytes()).map(|c| doc.raw(c));
                        assert_eq!(got, found, "{text:?}");
                        let index = Index::build(rows.as_bytes(), &opts).unwrap();
                        let doc = Doc::new(rows.as_bytes(), &index);
                        let all = doc.find_all(doc.root(), &format!("[*].{key}")).unwrap();
                        let all: Vec<_> = all.into_iter().map(|c| doc.raw(c)).collect();
                        assert_eq!(all, found.into_iter().chain(found).collect::<Vec<_>>());
                    }
                }
            }
        }
    }

    /// An index paired with another input (a misuse `Doc::new` allows):
    /// shorter, longer or other bytes give answers, errors or a checked
    /// panic (the key's body read by `string_close`, which is not this
    /// test's subject), never an unchecked read out of bounds: the member
    /// walk's unchecked reads rest on the index's own order and one check
    /// of the input's length, and their `debug_assert`s would fail here
    /// (so the test detects a bad read only in a debug build, as `cargo
    /// test` runs it; under `--release` it cannot fail).
    #[test]
    fn member_walks_over_another_input_stay_in_bounds() {
        let text =
            br#"{"alpha":1,"beta":{"gamma":[1,2,{"delta":"x"}]},"epsilon_key":null,"z":"end"}"#;
        let index = Index::build(text, &Options::default()).unwrap();
        let others: [&[u8]; 5] = [
            b"",
            b"{}",
            &text[..text.len() / 2],
            br#"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["#,
            br#"{"alpha":1,"beta":{"gamma":[1,2,{"delta":"x"}]},"epsilon_key":null,"z":"end"}    {"alpha":{"a":{"b":1}}}"#,
        ];
        for other in others {
            foreign_reads(
                &index,
                other,
                &["alpha", "beta", "epsilon_key", "z", "missing"],
            );
        }
        // The last key of an object near the end of the input, where the
        // other input holds a longer key's first word: its second word
        // would run past the end but for the walk's bound.
        let text = format!(r#"{{"{}":0,"z":1}}{}"#, "a".repeat(20), " ".repeat(10));
        let index = Index::build(text.as_bytes(), &Options::default()).unwrap();
        let at = text.rfind("\"z\"").unwrap();
        let mut other = text.as_bytes()[..at].to_vec();
        other.extend_from_slice(b"\"longkey1");
        other.resize(text.len(), b' ');
        foreign_reads(
            &index,
            &other,
            &["longkey1_15char", "longkey1_9", "longkey"],
        );
    }

    /// Reads of `keys` through `index` paired with `other`: see
    /// [`member_walks_over_another_input_stay_in_bounds`].
    fn foreign_reads(index: &Index, other: &[u8], keys: &[&'static str]) {
        {
            let doc = Doc::new(other, index);
            let root = doc.root();
            let mut reads: Vec<Box<dyn Fn()>> = vec![Box::new(move || {
                let _ = doc.find_all(root, "beta.gamma[*].delta");
            })];
            for &key in keys {
                reads.push(Box::new(move || {
                    let _ = doc.field(root, key.as_bytes());
                }));
                reads.push(Box::new(move || {
                    let _ = doc.find_all(root, &format!("beta.{key}"));
                }));
            }
            for read in reads {
                if let Err(e) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)) {
                    let msg = e
                        .downcast_ref::<String>()
                        .map(String::as_str)
                        .or_else(|| e.downcast_ref::<&str>().copied())
                        .unwrap_or("");
                    assert!(!msg.starts_with("assertion failed"), "{msg}");
                }
            }
        }
    }

    /// Child tables come after at most two walks' worth of children,
    /// whether a container counts its walks in its lock-free slot or, when
    /// another container holds that slot, in the map: object `i` of the
    /// root array (ordinal `i + 1`) shares its slot with object
    /// `i + COUNTS`.
    #[test]
    fn tables_after_two_walks_worth_in_a_slot_or_the_map() {
        use super::{TableSlot, Tables, COUNTS};
        let member = |j: usize| format!("\"k{j}\":{j}");
        let object = format!("{{{}}}", (0..20).map(member).collect::<Vec<_>>().join(","));
        let text = format!("[{}]", vec![object; COUNTS + 10].join(","));
        let index = Index::build(text.as_bytes(), &Options::default()).unwrap();
        let tables = Tables::default();
        let doc = Doc::with_tables(text.as_bytes(), &index, &tables);
        let built = |ord: u32| {
            let map = tables.map.lock().unwrap();
            map.as_ref()
                .and_then(|m| m.get(&ord))
                .is_some_and(|s| matches!(s, TableSlot::Built(_)))
        };
        let read = |i: i64, key: &str| {
            let o = doc.element(doc.root(), i).unwrap();
            assert_eq!(o.ord, i as u32 + 1);
            doc.get_i64(o, key).unwrap()
        };
        for i in [0, COUNTS as i64] {
            let ord = i as u32 + 1;
            // A short walk (3 members) is not counted.
            for _ in 0..5 {
                assert_eq!(read(i, "k2"), 2);
            }
            assert!(!built(ord), "{i}");
            // 11 members, then 23 >= 20 (another key: the memo answers
            // a read of `k10` again without a walk).
            assert_eq!(read(i, "k10"), 10);
            assert!(!built(ord), "{i}");
            assert_eq!(read(i, "k11"), 11);
            assert!(built(ord), "{i}");
            assert_eq!(read(i, "k19"), 19);
            assert_eq!(read(i, "k0"), 0);
        }
        // The first one counted in its slot, the second in the map.
        let slots = tables.counts.get().unwrap();
        assert_eq!(slots[1].load(std::sync::atomic::Ordering::Relaxed) >> 32, 2);
        // One walk of every member builds at once.
        assert_eq!(read(5, "k19"), 19);
        assert!(built(6));
    }

    /// The lean walk of [`Doc::keys_unique`] (small strict objects) against
    /// a set of the keys: objects of 2 to 16 members whose keys (0 to 19
    /// bytes, some equal, some equal but for one byte) are followed by
    /// every spacing before the `:` and every kind of value, at the end of
    /// the input (the word after a key's quote not all there) or not, in
    /// documents with a backslash elsewhere and without.
    #[test]
    fn small_keys_unique_agrees_with_a_set() {
        let mut rng = crate::test_rng(0x9E37_79B9_7F4A_7C15);
        let mut next = move |n: u64| rng() % n;
        let values = ["1", "\"s\"", "{\"a\":[1,{}]}", "[]", "null", "-2.5", "\"\""];
        let spaces = ["", " ", "\n ", "\t\t"];
        let mut checked = [0usize; 2];
        for _ in 0..4000 {
            let n = 2 + next(15) as usize;
            let keys: Vec<String> = (0..n)
                .map(|_| {
                    let len = next(20) as usize;
                    // Few letters: equal keys are common.
                    (0..len).map(|_| (b'a' + next(2) as u8) as char).collect()
                })
                .collect();
            let members: Vec<String> = keys
                .iter()
                .map(|k| {
                    let sp = spaces[next(4) as usize];
                    let v = values[next(values.len() as u64) as usize];
                    format!("\"{k}\"{sp}:{sp}{v}")
                })
                .collect();
            let escape = next(2) == 0;
            let mut text = format!("{{{}}}", members.join(","));
            if escape {
                text = format!("[{text},\"\\n\"]");
            }
            let index = Index::build(text.as_bytes(), &Options::default()).unwrap();
            assert_eq!(index.has_escapes(), escape);
            let doc = Doc::new(text.as_bytes(), &index);
            let obj = if escape {
                doc.element(doc.root(), 0).unwrap()
            } else {
                doc.root()
            };
            let set: std::collections::HashSet<&String> = keys.iter().collect();
            let want = set.len() == keys.len();
            assert_eq!(
                super::repeats::small_keys(&doc, obj, |_, _| ()),
                Some(want),
                "{text}"
            );
            assert_eq!(doc.keys_unique(obj).unwrap(), want, "{text}");
            checked[usize::from(want)] += 1;
        }
        assert!(checked[0] > 500 && checked[1] > 500, "{checked:?}");
    }

    /// `simple_index` against the two-pass reading it replaced (digits
    /// counted up to 19, then folded): indices of 0 to 20 digits, signed,
    /// with leading zeros, closed or not, followed by more path.
    #[test]
    fn simple_index_matches_two_passes() {
        let old = |path: &[u8], p: usize| -> Option<(i64, usize)> {
            let neg = *path.get(p)? == b'-';
            let d0 = p + usize::from(neg);
            let digits = path
                .get(d0..)?
                .iter()
                .take(19)
                .take_while(|b| b.is_ascii_digit())
                .count();
            if digits == 0 || digits > 18 || (digits > 1 && path[d0] == b'0') {
                return None;
            }
            let close = d0 + digits;
            if path.get(close) != Some(&b']') {
                return None;
            }
            let v = path[d0..close]
                .iter()
                .fold(0i64, |v, &b| v * 10 + i64::from(b - b'0'));
            Some((if neg { -v } else { v }, close + 1))
        };
        let mut cases = 0;
        for n in 0..=20 {
            for first in ["", "0", "1", "9"] {
                let digits: String = first
                    .chars()
                    .chain("7894561230".chars().cycle())
                    .take(n)
                    .collect();
                for sign in ["", "-", "+", "x"] {
                    for end in ["", "]", "].a", "]x", "x]", "/]", ":]"] {
                        let path = format!("a[{sign}{digits}{end}");
                        assert_eq!(
                            super::simple_index(path.as_bytes(), 2),
                            old(path.as_bytes(), 2),
                            "{path}"
                        );
                        cases += 1;
                    }
                }
            }
        }
        assert!(cases > 2000);
        assert_eq!(super::simple_index(b"[42]", 1), Some((42, 4)));
        assert_eq!(super::simple_index(b"[-7].a", 1), Some((-7, 4)));
    }

    /// The one-pass reader of simple paths against the path parser: every
    /// path built from a set of pieces (keys present and missing, indices in
    /// and out of range, negative, with leading zeros or too many digits,
    /// quoted keys, wildcards, pointers, stray separators) up to three
    /// pieces long, on a strict and a lazy index, from the root and from an
    /// inner value. Where it answers, it answers what the parser does.
    #[test]
    fn simple_paths_match_the_parser() {
        let input = br#"{"a":{"b":[10,{"c":"x","d":[1,2]},[3]],"e.f":1,"":2,"*":3,"a]b":4,"-1":5},"b":[{"c":1},{"c":2}],"\u0061b":6,"k":null,"long_key_name":{"xyzzy_long_key":[7]}}"#;
        let pieces = [
            "long_key_name",
            "long_key_nam",
            "xyzzy_long_key",
            "abcdefgh",
            "abcdefghi",
            "a",
            "b",
            "c",
            "d",
            "e",
            "k",
            "ab",
            "a]b",
            "zz",
            "*",
            "-1",
            "e.f",
            "/a",
            "",
            ".",
            "..",
            ".a",
            ".b",
            ".c",
            ".*",
            ".[0]",
            "[0]",
            "[1]",
            "[2]",
            "[-1]",
            "[-2]",
            "[-3]",
            "[-0]",
            "[00]",
            "[01]",
            "[-]",
            "[5]",
            "[999999999999999999]",
            "[9999999999999999999]",
            "[-9223372036854775808]",
            "[*]",
            "[\"c\"]",
            "[\"\"]",
            "[",
            "]",
            "[0",
            "[x]",
            "x",
            "~",
            "\"",
        ];
        let mut paths = vec![String::new()];
        for a in pieces {
            paths.push(a.to_owned());
            for b in pieces {
                paths.push(format!("{a}{b}"));
                for c in ["", ".c", "[1]", ".d[-1]", "[*]", "..", "[0]x", ".*"] {
                    paths.push(format!("{a}{b}{c}"));
                }
            }
        }
        let mut answered = 0;
        for lazy in [false, true] {
            let opts = Options {
                lazy,
                ..Options::default()
            };
            let index = Index::build(input, &opts).unwrap();
            let doc = Doc::new(input, &index);
            let inner = doc.find(doc.root(), "a").unwrap();
            for at in [doc.root(), inner] {
                for p in &paths {
                    let want = doc.find_parsed(at, p);
                    if let Some(got) = doc.find_simple(at, p.as_bytes()) {
                        let got = got.map_err(|off| AccessError::NotFound { at: off as usize });
                        assert_eq!(got, want, "path {p:?} (lazy: {lazy})");
                        answered += 1;
                    }
                    assert_eq!(doc.find(at, p), want, "path {p:?} (lazy: {lazy})");
                }
            }
        }
        // The fast path answers a good share of them (not only the trivial).
        assert!(answered > 2000, "only {answered} answered");
    }

    /// [`has_dot_or_bracket`] of a short path's word against a byte loop:
    /// paths of 1 to 7 bytes with every byte value at every place over a
    /// plain background (and over a background of NULs).
    #[test]
    fn has_dot_or_bracket_matches_a_byte_loop() {
        for fill in [b'x', 0, 0xff, b'/'] {
            for len in 1..8usize {
                for pos in 0..len {
                    for b in 0..=255u8 {
                        let mut p = vec![fill; len];
                        p[pos] = b;
                        let want = p.iter().any(|&c| c == b'.' || c == b'[');
                        assert_eq!(has_dot_or_bracket(word_of(&p)), want, "{p:?}");
                    }
                }
            }
        }
    }

    /// The end of a bare key ([`key_end`], a word at a time) against a
    /// byte loop: every start in paths of length 0 to 20 with a separator,
    /// a high byte or a NUL at every place over a plain background, and
    /// with a second separator three bytes later.
    #[test]
    fn key_end_matches_a_byte_loop() {
        let alphabet = [b'a', b'.', b'[', b']', 0x80, 0xff, b'-', 0, b'/', b'Z'];
        let mut checked = 0;
        for len in 0..=20usize {
            let mut paths = vec![vec![b'x'; len]];
            for pos in 0..len {
                for &b in &alphabet {
                    let mut p = vec![b'x'; len];
                    p[pos] = b;
                    paths.push(p.clone());
                    if pos + 3 < len {
                        p[pos + 3] = b'.';
                        paths.push(p);
                    }
                }
            }
            for p in &paths {
                for i in 0..=len {
                    let want = p[i..]
                        .iter()
                        .position(|&b| b == b'.' || b == b'[')
                        .map_or(len, |q| i + q);
                    assert_eq!(key_end(p, i), want, "{p:?} from {i}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    /// [`Doc::quick`] against [`Doc::value`]: every element of arrays of
    /// numbers and strings (short and long, escaped, non-ASCII, raw control
    /// bytes in a lazy document, ends of every kind), strict and lazy.
    /// Where `quick` answers, `value` gives the same scalar. Where
    /// [`Doc::quick_decimal`] answers, the value's text is a valid number
    /// and the answer is what the standard library reads from that text
    /// (`str::parse`, correctly rounded: a reference independent of
    /// `plain_decimal`, which `value` itself goes through).
    #[test]
    fn quick_matches_value() {
        use super::{Quick, Value};
        use crate::decode::Number;
        let docs: [&[u8]; 10] = [
            br#"[0,-0,7,-12,123456789,9999999999999999,99999999999999999,1.5,1e3,-1,true,null,{},[]]"#,
            b"[0.7, -0.0,1.5 ,12.250,3.14159265358979,1e3,0.1e1, 5 ,01.5,-,123456789.5,\n0.25\n,12.,-.5,1.e2]",
            // Decimals whose nearest double is hard to round to: the
            // halfway and near-halfway cases of short mantissas.
            b"[0.1,0.2,0.3,2.675,1.005,4.35,0.000001,-99.99,9007199254740.993,1.7976931348623157,\
              123456.7890123,0.30000000000000004,5e-324,0.9999999999999999]",
            b"[8.5,98.76,1000000.5,3.0,0.0,-0.5,17.25,65535.99609375,0.015625,42.0000001]",
            b"[1.5x, 2.5 y ,3 z,4.0]",
            br#"[ 12 , -3 ,"",  "a" , "abcdefghijklmnop", "abcdefghijklmnopq", "a\"b", "\u00e9" ]"#,
            b"[\"caf\xc3\xa9\",\"\xc3\xa9\",5]",
            b"[\"ab\x01c\",\"\x1f\",\"x\",7]",
            b"{\"a\":\"v\",\"b\":-42,\"c\":\"0123456789abcdef\"}",
            b"[12\n,\"s\"\t]",
        ];
        let (mut answered, mut decimals) = (0, 0);
        for input in docs {
            for lazy in [false, true] {
                let opts = Options {
                    lazy,
                    ..Options::default()
                };
                let Ok(index) = Index::build(input, &opts) else {
                    assert!(!lazy, "{:?}", String::from_utf8_lossy(input));
                    continue;
                };
                let doc = Doc::new(input, &index);
                let root = doc.root();
                let n = doc.len(root).unwrap();
                let object = input[0] == b'{';
                for i in 0..n {
                    let c = if object {
                        let key = [b'a' + i as u8];
                        doc.field(root, &key).unwrap()
                    } else {
                        doc.element(root, i as i64).unwrap()
                    };
                    if let Some(n) = doc.quick_decimal(c) {
                        decimals += 1;
                        let text = std::str::from_utf8(doc.raw(c)).unwrap();
                        // A valid JSON number (`str::parse` takes more).
                        assert!(
                            crate::decode::number::parse_number(text.as_bytes(), 0).is_ok(),
                            "quick_decimal {n:?} of {text:?} (lazy: {lazy})"
                        );
                        match n {
                            Number::Int(v) => assert_eq!(Ok(v), text.parse::<i64>(), "{text:?}"),
                            Number::Float(v) => assert_eq!(
                                v.to_bits(),
                                text.parse::<f64>().unwrap().to_bits(),
                                "{text:?} (lazy: {lazy})"
                            ),
                            Number::BigInt(t) => panic!("quick_decimal BigInt {t:?} of {text:?}"),
                        }
                        match doc.value(c) {
                            Ok(Value::Number(m)) => {
                                assert_eq!(format!("{n:?}"), format!("{m:?}"), "lazy: {lazy}")
                            }
                            v => panic!("quick_decimal {n:?}, value {v:?} (lazy: {lazy})"),
                        }
                    }
                    let Some(q) = doc.quick(c) else { continue };
                    answered += 1;
                    match (q, doc.value(c)) {
                        (Quick::Int(v), Ok(Value::Number(Number::Int(w)))) => assert_eq!(v, w),
                        (Quick::Str(s), Ok(Value::String(t))) => assert_eq!(s, t),
                        (q, v) => panic!("quick {q:?}, value {v:?} (lazy: {lazy})"),
                    }
                }
            }
        }
        assert!(answered > 20, "only {answered} answered");
        assert!(decimals > 30, "only {decimals} decimals answered");
    }

    /// `texts` (number texts and others), then integers of every length
    /// from 1 to 20 digits, plain and negative.
    fn with_int_runs(texts: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        for n in 1..=20 {
            out.push("1234567890123456789012"[..n].to_string());
            out.push(format!("-{}", &"9876543210987654321098"[..n]));
        }
        out
    }

    /// The short read of an integer that whitespace ends (the fallback
    /// after the spans) against `str::parse`: 1 to 20 digits, the `i64`
    /// edges and one past them; in a strict document it answers exactly
    /// when the text fits an `i64`.
    #[test]
    fn short_int_before_whitespace_matches_parse() {
        let texts = [
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "9999999999999999999",
            "-9999999999999999999",
            "1000000000000000000",
            "10000000000000000000",
            "12345678901234567890",
        ];
        let texts = with_int_runs(&texts);
        for text in texts {
            for end in [" ", "\n", "\t ", "\r\n  "] {
                let input = format!("[{text}{end}, 1]");
                let index = Index::build(input.as_bytes(), &Options::default()).unwrap();
                let doc = Doc::new(input.as_bytes(), &index);
                let c = doc.element(doc.root(), 0).unwrap();
                let got = match doc.quick(c) {
                    Some(Quick::Int(v)) => Some(v),
                    q => {
                        assert!(q.is_none(), "{q:?}");
                        None
                    }
                };
                assert_eq!(got, text.parse::<i64>().ok(), "{input:?}");
            }
        }
    }

    /// The views' number reader (`quick_number`) and the getters' integer
    /// reader (`span_int`) against `value`: where they answer, they answer
    /// as `value` does, for integers of every length, plain and other
    /// decimals, at every kind of end, in strict and lazy documents.
    #[test]
    fn quick_number_and_span_int_match_value() {
        let texts = [
            "0",
            "-0",
            "7",
            "0.7",
            "-12.5",
            "1e5",
            "1.5e-3",
            "0.000001",
            "123456789.25",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775809",
            "1234567890123456.5",
            "12345678.123456",
            "0123",
            "1.",
            "\"12\"",
            "true",
            "null",
        ];
        let texts = with_int_runs(&texts);
        for text in texts {
            for end in ["", " ", "\n  "] {
                for lazy in [false, true] {
                    let input = format!("[{text}{end}, 1]");
                    let opts = Options {
                        lazy,
                        ..Options::default()
                    };
                    let Ok(index) = Index::build(input.as_bytes(), &opts) else {
                        continue;
                    };
                    let doc = Doc::new(input.as_bytes(), &index);
                    let c = doc.element(doc.root(), 0).unwrap();
                    let want = doc.value(c).ok();
                    if let Some(n) = doc.quick_number(c) {
                        assert_eq!(Some(Value::Number(n)), want, "{input:?} lazy {lazy}");
                    }
                    if let Some(v) = doc.span_int(c) {
                        let n = Value::Number(Number::Int(v));
                        assert_eq!(Some(n), want, "{input:?} lazy {lazy}");
                    }
                }
            }
        }
    }

    /// An array walked one element at a time from a kept position
    /// (`ArrayItems::at`, `next_item`) gives the elements `array_items`
    /// does, then nothing, again and again.
    #[test]
    fn next_item_walks_as_array_items() {
        for text in [
            "[]",
            "[1]",
            "[1, [2, [3]], {\"a\": [4]}, \"s\", null, 5.5]",
            "[[], {}, []]",
        ] {
            let index = Index::build(text.as_bytes(), &Options::default()).unwrap();
            let doc = Doc::new(text.as_bytes(), &index);
            let want: Vec<Cursor> = doc.array_items(doc.root()).unwrap().collect();
            let mut at = doc.array_items(doc.root()).unwrap().at();
            let mut got = Vec::new();
            while let Some(c) = doc.next_item(&mut at) {
                got.push(c);
            }
            assert_eq!(got, want, "{text}");
            assert!(doc.next_item(&mut at).is_none());
        }
    }

    /// The word reader against `str::parse`: every digit count to 20, with
    /// and without a sign, a leading zero, a non-digit at every position,
    /// every kind of end, with and without eight bytes after the first
    /// digit.
    #[test]
    fn int_span_matches_parse() {
        let slow = |t: &[u8]| -> Option<i64> {
            let d = t.strip_prefix(b"-").unwrap_or(t);
            if d.is_empty() || d.len() > 16 || (d.len() > 1 && d[0] == b'0') {
                return None;
            }
            if !d.iter().all(u8::is_ascii_digit) {
                return None;
            }
            std::str::from_utf8(t).ok()?.parse().ok()
        };
        let digits = b"98765432109876543210";
        for n in 0..=20 {
            for sign in [&b""[..], b"-"] {
                for lead in [None, Some(b'0')] {
                    let mut t = sign.to_vec();
                    t.extend(lead);
                    t.extend(&digits[..n]);
                    let mut cases = vec![t.clone()];
                    for at in 0..t.len() {
                        for b in [b'.', b'e', b' ', b'/', b':', 0xB9, b'-'] {
                            let mut u = t.clone();
                            u[at] = b;
                            cases.push(u);
                        }
                    }
                    for case in cases {
                        for tail in [&b""[..], b",", b"}       ", b"]1234567890"] {
                            let input = [&case[..], tail].concat();
                            let want = slow(&case);
                            let got = int_span(&input, 0, case.len());
                            // Without eight bytes from the first digit on,
                            // the word reader declines (never a wrong answer).
                            let p = usize::from(case.first() == Some(&b'-'));
                            if got.is_some() || input.len() >= p + 8 {
                                assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&input));
                            }
                        }
                    }
                }
            }
        }
    }

    /// The word-at-a-time digit reader against a byte loop: every digit
    /// string to 24 digits (so every chunk boundary and the 18-digit cap),
    /// ended by every kind of byte or by the end of the input.
    #[test]
    fn leading_digits_match_a_byte_loop() {
        let slow = |t: &[u8]| {
            let n = t.iter().take(18).take_while(|b| b.is_ascii_digit()).count();
            let v = t[..n]
                .iter()
                .fold(0i64, |v, &b| v * 10 + i64::from(b - b'0'));
            (v, n)
        };
        let digits = b"987654321098765432109876";
        for n in 0..=digits.len() {
            for end in [
                None,
                Some(b','),
                Some(b'}'),
                Some(b'.'),
                Some(b'/'),
                Some(b':'),
                Some(0xB9),
                Some(b'e'),
            ] {
                for pad in 0..9 {
                    let mut t = digits[..n].to_vec();
                    t.extend(end);
                    t.extend(std::iter::repeat_n(b'7', pad));
                    assert_eq!(
                        leading_digits(&t),
                        slow(&t),
                        "{:?}",
                        String::from_utf8_lossy(&t)
                    );
                }
            }
        }
        for b in 0..=255u8 {
            let t = [b'1', b'2', b, b'3', b'4', b'5', b'6', b'7', b'8', b'9'];
            assert_eq!(leading_digits(&t), slow(&t), "{b}");
        }
    }
}
