//! The edit writer: one edited container of a document, as copies of its
//! original bytes and the host's new keys, values and edited children.
//!
//! # Algorithm
//!
//! A container is in one of four shapes, and each has its own writer:
//!
//! | shape | writer | cost |
//! |---|---|---|
//! | lazy object, maybe with [`Patches`] | [`write_lazy_object`] | splice: the edits + one key walk (none when the patches' [`MemberTable`] is built: it has the walk's answers, and replacements alone, set in document order, are then spliced in one pass over the patches; with no patch, only edited children, a walk over the members after each of them); else O(members) |
//! | unfolded object ([`Members`]) | [`write_members`] | O(members) + bytes |
//! | lazy array | [`write_lazy_array`] | splice: the edited children; else O(elements) |
//! | unfolded array ([`Slot`]s) | [`write_slots`] | splice when only inserted into: O(elements) walk, no per-element writes; else O(elements) + bytes |
//!
//! (An untouched container, one whose cached children hold no edits
//! either, is one copy: [`write_clean`].)
//!
//! **Splicing** (strict documents only; a lazy document's bytes were never
//! validated, see below). The container's bytes are copied as written,
//! and only the edited spans are replaced: the value of each replaced
//! member, the span of each edited child; a deleted member is cut out
//! with one separator: the comma after it (from its key's quote to the
//! next member's key), or, when no member follows it, the comma before it
//! (from the end of the last member kept before it), so `{"a": 1, "b": 2,
//! "c": 3}` without `b` is `{"a": 1, "c": 3}` and without `c` is `{"a": 1,
//! "b": 2}`; added object members go after the last original member
//! (before the whitespace that precedes `}`), each as `,"key":value`;
//! an element inserted into an array goes before the original element
//! that follows it, as `value,`, and one appended after the last original
//! element, as `,value` (`[1, 2]` with `0` inserted first and `3`
//! appended is `[0,1, 2,3]`).
//! Keys, separators and whitespace of everything else stay as written. An
//! object is spliced when its keys are distinct (with a repeated key, the
//! later occurrences are dropped from the output, as reads never see
//! them: member by member); one whose own members are untouched (no
//! patch, only edited children) when no edited child's key repeats: its
//! other keys, repeated or not, stay as written, as in an untouched
//! object, and only the members after each edited child are walked. A
//! lazy array always is spliced (in a strict document), and an unfolded
//! one when its original elements are all there in their order (only
//! inserts and appends; into an empty one the new elements go right after
//! `[`, as added members into an empty object).
//!
//! **Member by member** (everything else). The container is written
//! child by child in its current order: each *run* of untouched original
//! children with consecutive original ordinals is one copy of the input
//! from the first child's start (an object member: its key's quote) to
//! the last child's end, separators and whitespace included; between runs,
//! new children and edited ones, the writer puts a `,`. A member of a lazy
//! object replaced by a patch keeps its key as written (`"key" :` copied)
//! in a strict document; a member set in an unfolded object, like a new
//! one, gets its key written by the host (`"key":`). So an edit
//! changes only the bytes it must, and the output of a container with
//! nothing deleted from the middle keeps its layout.
//!
//! **Lazy documents.** Their values were never validated, so every
//! original value is validated (strictly, by [`crate::Index::build`] over
//! its range) before it is copied; an invalid one is an
//! [`EditError::Invalid`] (the host raises its decode error), never
//! passed on.
//!
//! **Children.** A host keeps a value for some original child containers
//! (a cached view); the writer asks [`Out::edited`] about each one it
//! meets and hands the edited ones to [`Out::child`] at their place, so
//! the host recurses (or not), never the engine.
//!
//! # Driving it
//!
//! ```
//! use qjson::edit::{write_members, EditError, Members, Out, Slot};
//! use qjson::{Cursor, Doc, Index, Options};
//!
//! /// A host whose values are JSON texts, written as they are.
//! struct Text(Vec<u8>, &'static [u8]);
//! impl Out for Text {
//!     type Key = String;
//!     type Value = String;
//!     type Error = EditError;
//!     fn copy(&mut self, a: usize, b: usize) { self.0.extend_from_slice(&self.1[a..b]) }
//!     fn byte(&mut self, b: u8) { self.0.push(b) }
//!     fn key_text(&mut self, k: &str) { self.0.extend_from_slice(format!("{k:?}").as_bytes()) }
//!     fn key(&mut self, k: &String) -> Result<(), EditError> { Ok(self.key_text(k)) }
//!     fn value(&mut self, v: &String) -> Result<(), EditError> { Ok(self.0.extend_from_slice(v.as_bytes())) }
//!     fn child(&mut self, v: &String) -> Result<(), EditError> { self.value(v) }
//!     fn edited(&mut self, _: &String) -> Result<Option<Cursor>, EditError> { Ok(None) }
//!     fn fail(&mut self, e: EditError) -> EditError { e }
//! }
//!
//! let input: &'static [u8] = br#"{"a": 1,  "b": [2], "c": 3}"#;
//! let index = Index::build(input, &Options::default()).unwrap();
//! let doc = Doc::new(input, &index);
//! // Unfold the root, then `b = true` and add `d`.
//! let mut m = Members::unfold(&doc, doc.root()).unwrap();
//! m.set("b", "true".to_string());
//! m.set("d", "null".to_string());
//! let mut out = Text(Vec::new(), input);
//! write_members(&doc, doc.root(), &m, &mut out).unwrap();
//! // Untouched members keep their bytes; a member set anew is written
//! // with its key by the host, as a new one is.
//! assert_eq!(out.0, br#"{"a": 1,"b":true,"c": 3,"d":null}"#);
//! ```

use super::members::{Members, Slot};
use super::out::{EditError, Out};
use super::patches::Patches;
#[cfg(doc)]
use super::table::MemberTable;
use crate::doc::repeats::{self, Keys};
use crate::doc::{Cursor, Doc};
use crate::error::AccessError;
use crate::index::{Index, Options};
use crate::lex::skip_ws;
use smallvec::SmallVec;

/// Edited children found among a lazy container's cached ones, by offset.
type Edited<'v, V> = SmallVec<[(Cursor, &'v V); 4]>;

fn access<O: Out>(out: &mut O, e: AccessError) -> O::Error {
    out.fail(EditError::Access(e))
}

/// Validate `input[a..b]` when the document is lazy (strict documents were
/// validated when indexed).
pub fn check(doc: &Doc<'_>, a: usize, b: usize) -> Result<(), EditError> {
    if !doc.index().is_lazy() {
        return Ok(());
    }
    let opts = Options {
        lazy: false,
        max_depth: usize::MAX,
    };
    match Index::build(&doc.input()[a..b], &opts) {
        Ok(_) => Ok(()),
        Err(mut e) => {
            e.offset += a;
            Err(EditError::Invalid(e))
        }
    }
}

fn copy_checked<O: Out>(doc: &Doc<'_>, a: usize, b: usize, out: &mut O) -> Result<(), O::Error> {
    check(doc, a, b).map_err(|e| out.fail(e))?;
    out.copy(a, b);
    Ok(())
}

/// An untouched value: one copy of its bytes (the root: the whole input,
/// the whitespace around it included), validated in a lazy document.
pub fn write_clean<O: Out>(doc: &Doc<'_>, at: Cursor, out: &mut O) -> Result<(), O::Error> {
    let (a, b) = if at == doc.root() {
        (0, doc.input().len())
    } else {
        doc.span(at)
    };
    copy_checked(doc, a, b, out)
}

/// The children of a container written member by member, coalescing
/// untouched neighbours into runs.
struct Runs<'d> {
    doc: Doc<'d>,
    /// The pending run: its first byte, its last child (whose end closes
    /// the run, found only when the run is written) and that child's ordinal.
    run: Option<(usize, Cursor, u32)>,
    first: bool,
}

impl<'d> Runs<'d> {
    fn new(doc: &Doc<'d>) -> Self {
        Runs {
            doc: *doc,
            run: None,
            first: true,
        }
    }

    fn flush<O: Out>(&mut self, out: &mut O) {
        if let Some((a, last, _)) = self.run.take() {
            out.copy(a, self.doc.span(last).1);
        }
    }

    /// Close the pending run and write the separator of a new piece.
    fn piece<O: Out>(&mut self, out: &mut O) {
        self.flush(out);
        if !self.first {
            out.byte(b',');
        }
        self.first = false;
    }

    /// Original child `i` whose bytes start at `a` (an object member: its
    /// key's quote) and whose value is `at`; `edited`: the host's value for
    /// it when that holds edits.
    fn orig<O: Out>(
        &mut self,
        out: &mut O,
        i: u32,
        a: usize,
        at: Cursor,
        edited: Option<&O::Value>,
    ) -> Result<(), O::Error> {
        if let Some(v) = edited {
            self.piece(out);
            // The key and colon as written (keys were checked when read).
            if a < at.start as usize {
                out.copy(a, at.start as usize);
            }
            return out.child(v);
        }
        if self.doc.index().is_lazy() {
            let (start, b) = self.doc.span(at);
            check(&self.doc, start, b).map_err(|e| out.fail(e))?;
        }
        match self.run {
            Some((s, _, last)) if last + 1 == i => self.run = Some((s, at, i)),
            _ => {
                self.piece(out);
                self.run = Some((a, at, i));
            }
        }
        Ok(())
    }

    /// Original child `i` of an unfolded container, with the host's value
    /// for it if any.
    fn slot<O: Out>(
        &mut self,
        out: &mut O,
        i: u32,
        a: usize,
        at: Cursor,
        view: Option<&O::Value>,
    ) -> Result<(), O::Error> {
        let edited = match view {
            Some(v) => out.edited(v)?.map(|_| v),
            None => None,
        };
        self.orig(out, i, a, at, edited)
    }
}

/// The cached children of a lazy container that hold edits, by offset,
/// into `edited` (the caller's, empty: no copy of the list on return).
#[inline]
fn edited_children<'v, O: Out>(
    out: &mut O,
    children: impl IntoIterator<Item = &'v O::Value>,
    edited: &mut Edited<'v, O::Value>,
) -> Result<(), O::Error>
where
    O::Value: 'v,
{
    for v in children {
        if let Some(c) = out.edited(v)? {
            edited.push((c, v));
        }
    }
    if edited.len() > 1 {
        edited.sort_unstable_by_key(|&(c, _)| c.start);
    }
    Ok(())
}

fn edited_at<'v, V>(edited: &Edited<'v, V>, c: Cursor) -> Option<&'v V> {
    edited
        .binary_search_by_key(&c.start, |&(e, _)| e.start)
        .ok()
        .map(|i| edited[i].1)
}

/// A lazy object (not unfolded) with `patches` and the host's cached
/// child values `children` (views of original child containers, edited or
/// not). Spliced when the document is strict and the keys are distinct
/// (deleted members cut out with their separators); else member by
/// member, the later occurrences of a repeated key dropped (as reads do).
pub fn write_lazy_object<'v, O: Out>(
    doc: &Doc<'_>,
    at: Cursor,
    patches: &Patches<O::Key, O::Value>,
    children: impl IntoIterator<Item = &'v O::Value>,
    out: &mut O,
) -> Result<(), O::Error>
where
    O::Value: 'v,
{
    let strict = !doc.index().is_lazy();
    let mut edited: Edited<'v, O::Value> = SmallVec::new();
    edited_children(out, children, &mut edited)?;
    if strict && edited.is_empty() && patches.table.distinct() {
        if let Some(done) = splice_replaced(doc, at, patches, out) {
            return done;
        }
    }
    if strict && splice_object(doc, at, patches, &edited, out)? {
        return Ok(());
    }
    write_object_by_member(doc, at, patches, &edited, strict, out)
}

/// [`write_lazy_object`]'s usual case, the edit of a forwarded request's
/// object (`model = ...`, then `temperature = ...`): only replaced members
/// (no deletion, no addition), set in document order, no edited child,
/// and the keys known distinct from the member table its lookups built.
/// The object's bytes with each replaced value's span swapped: one pass
/// over the patches to check that shape (no storage), one to write,
/// without [`splice_object`]'s list of edits, its sort, walk and passes
/// for the deleted and added members. `None`, with nothing written, for
/// any other patches (replacements out of document order included: the
/// general splice sorts them).
#[inline]
fn splice_replaced<O: Out>(
    doc: &Doc<'_>,
    at: Cursor,
    patches: &Patches<O::Key, O::Value>,
    out: &mut O,
) -> Option<Result<(), O::Error>> {
    let mut last = None;
    for p in patches.iter() {
        match (p.orig, &p.value) {
            (Some(c), Some(_)) if last.is_none_or(|l| l < c.start) => last = Some(c.start),
            _ => return None,
        }
    }
    let (mut pos, end) = doc.container_span(at);
    for p in patches.iter() {
        if let (Some(c), Some(v)) = (p.orig, &p.value) {
            out.copy(pos, c.start as usize);
            if let Err(e) = out.value(v) {
                return Some(Err(e));
            }
            pos = doc.span(c).1;
        }
    }
    out.copy(pos, end);
    #[cfg(test)]
    SPLICED_REPLACED.with(|n| n.set(n.get() + 1));
    Some(Ok(()))
}

#[cfg(test)]
thread_local! {
    /// How many objects [`splice_replaced`] wrote on this thread (tests
    /// check that the shapes it takes reach it).
    pub(super) static SPLICED_REPLACED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// [`write_lazy_object`] member by member: a lazy document, or a key that
/// repeats (out of line: the splice is the usual case).
#[inline(never)]
fn write_object_by_member<O: Out>(
    doc: &Doc<'_>,
    at: Cursor,
    patches: &Patches<O::Key, O::Value>,
    edited: &Edited<'_, O::Value>,
    strict: bool,
    out: &mut O,
) -> Result<(), O::Error> {
    out.byte(b'{');
    let mut runs = Runs::new(doc);
    let base = doc.input().as_ptr() as usize;
    let items = doc.distinct_items(at).map_err(|e| access(out, e))?;
    for m in items {
        let (i, raw, c) = m.map_err(|e| access(out, e))?;
        // The key's opening quote.
        let key_at = raw.as_ptr() as usize - base - 1;
        match patches.for_original(c.start) {
            Some(p) => {
                if let Some(v) = &p.value {
                    runs.piece(out);
                    if strict {
                        // The key and colon as written: checked with the
                        // document, and it equals the patch's key.
                        out.copy(key_at, c.start as usize);
                    } else {
                        out.key(&p.key)?;
                        out.byte(b':');
                    }
                    out.value(v)?;
                }
            }
            None => runs.orig(out, i, key_at, c, edited_at(edited, c))?,
        }
    }
    for (k, v) in patches.added() {
        runs.piece(out);
        out.key(k)?;
        out.byte(b':');
        out.value(v)?;
    }
    runs.flush(out);
    out.byte(b'}');
    Ok(())
}

/// Objects with at most this many members are checked for repeated keys
/// by [`splice_walk`] itself; larger ones by sorted fingerprints
/// (`doc/repeats.rs`), as everywhere.
const PAIRWISE_MAX: usize = repeats::SMALL;

/// One walk over a strict object's members for [`splice_object`]: `None`
/// when a key repeats (the object is then written member by member), else
/// how many members were deleted, the ranges they leave pushed to `edits`
/// as cuts.
///
/// Each run of consecutive deleted members goes with the separator after
/// it (from its first key's quote to the next member's key), or, when no
/// member follows it, with the separator before it (from the end of the
/// last member kept before it); when every member goes, from the first
/// key's quote to the last value's end. So the whitespace around what
/// stays is as written.
///
/// A small object whose patches hold a built [`MemberTable`] (its lookups
/// made it) is not walked: the table says its keys are distinct and where
/// each member is. An object with no patch, only edited children
/// (`edited`), walks only the members after each of them
/// ([`edited_keys_once`]).
///
/// Repeated keys: a small object with deletions is walked by the lean
/// walk of [`Doc::keys_unique`] (`repeats::small_keys`), which checks its
/// keys on the way; where that walk cannot tell (a key with a backslash),
/// by the general one, its raw keys compared pairwise (length first):
/// equal bytes are the same key, and when no key holds a backslash,
/// different bytes are different keys (otherwise [`Doc::keys_unique`]
/// decides, as it does when nothing is deleted, where it is the only
/// walk); a large object's keys are gathered by the same walk and checked
/// at its end (`Keys` of `doc/repeats.rs`).
fn splice_walk<K, V>(
    doc: &Doc<'_>,
    at: Cursor,
    patches: &Patches<K, V>,
    edited: &Edited<'_, V>,
    edits: &mut Edits<'_, V>,
) -> Result<Option<usize>, AccessError> {
    if !patches.deletes() {
        // Nothing to walk for but the keys: known distinct when the
        // object's member table is built, else checked by `keys_unique`
        // (less cost than a walk with the values).
        if patches.table.distinct() {
            return Ok(Some(0));
        }
        if patches.is_empty() && edited_keys_once(doc, at, edited) {
            return Ok(Some(0));
        }
        return Ok(doc.keys_unique(at)?.then_some(0));
    }
    // The deleted members, by their value's structural.
    let mut gone: SmallVec<[u32; 4]> = patches
        .iter()
        .filter(|p| p.value.is_none())
        .filter_map(|p| p.orig.map(|c| c.sidx))
        .collect();
    gone.sort_unstable();
    let new_cuts = |gone| Cuts {
        gone,
        next: 0,
        run: None,
        kept: None,
    };
    let mut cuts = new_cuts(&gone);
    let s = &doc.index().structurals;
    if let Some(members) = patches.table.members() {
        // The member table has the walk's answers: distinct keys, and
        // where each member is.
        for &(k, ord) in members {
            cuts.member(s[k as usize] as usize, k + 2, ord, edits);
        }
        cuts.finish(doc, edits);
        return Ok(Some(gone.len()));
    }
    let lean = repeats::small_keys(doc, at, |k, ord| {
        cuts.member(s[k] as usize, k as u32 + 2, ord, edits);
    });
    match lean {
        Some(true) => {
            cuts.finish(doc, edits);
            return Ok(Some(gone.len()));
        }
        Some(false) => return Ok(None),
        None => {
            // Start over with the general walk.
            edits.clear();
            cuts = new_cuts(&gone);
        }
    }
    let n = doc.len(at)?;
    if n <= PAIRWISE_MAX {
        return walk_pairwise(doc, at, n, &mut cuts, edits, gone.len());
    }
    if !walk_large(doc, at, n, &mut cuts, edits)? {
        return Ok(None);
    }
    Ok(Some(gone.len()))
}

/// [`splice_walk`]'s general walk over a small object (a key with a
/// backslash, where the lean walk cannot tell): its raw keys compared
/// pairwise. A plain loop over the members (no repeats skipped: they are
/// found here), out of line (the lean walk is the usual case).
#[inline(never)]
fn walk_pairwise<V>(
    doc: &Doc<'_>,
    at: Cursor,
    n: usize,
    cuts: &mut Cuts<'_>,
    edits: &mut Edits<'_, V>,
    deleted: usize,
) -> Result<Option<usize>, AccessError> {
    let base = doc.input().as_ptr() as usize;
    let mut keys: [&[u8]; PAIRWISE_MAX] = [&[]; PAIRWISE_MAX];
    let mut escaped = false;
    let mut walked = 0;
    for (raw, c) in doc.object_items(at)? {
        if keys[..walked]
            .iter()
            .any(|k| k.len() == raw.len() && *k == raw)
        {
            return Ok(None);
        }
        keys[walked] = raw;
        walked += 1;
        // (Keys are short: a loop without an early exit, which the
        // compiler vectorizes, beats memchr's set-up.)
        escaped |= raw.iter().fold(false, |e, &b| e | (b == b'\\'));
        cuts.member(raw.as_ptr() as usize - base - 1, c.sidx, c.ord, edits);
    }
    cuts.finish(doc, edits);
    if walked != n || (escaped && !doc.keys_unique(at)?) {
        return Ok(None);
    }
    Ok(Some(deleted))
}

/// Whether no edited child's key repeats in object `at`, whose own
/// members are untouched (no patch), as far as
/// [`repeats::repeated_later`] can tell (false: it cannot, or one does).
///
/// Such an object is copied as written around its edited children: the
/// keys that did not change keep their bytes, a repeated one included,
/// as in an untouched object (a reader that keeps a key's last value
/// sees what it would see in the input), and only an edited child's key
/// must be its only occurrence, so that every reader sees the edit. So
/// the object's keys need not all be checked: only the members after
/// each edited child are walked (a request's `messages` is usually the
/// last member: nothing to walk). When one does repeat, the object is
/// written with each key once, as an edited object is.
fn edited_keys_once<V>(doc: &Doc<'_>, at: Cursor, edited: &Edited<'_, V>) -> bool {
    edited
        .iter()
        .all(|&(c, _)| repeats::repeated_later(doc, at, c) == Some(false))
}

/// [`splice_walk`] over a large object: the same walk gathers its keys,
/// checked for repeats at the end (`doc/repeats.rs`: sorted fingerprints,
/// no hash set); false when a key repeats. Out of line: its key buffers
/// (about 1.5 KB of stack) then take no room in the frames of the
/// writer's recursion into edited children.
#[inline(never)]
fn walk_large<V>(
    doc: &Doc<'_>,
    at: Cursor,
    n: usize,
    cuts: &mut Cuts<'_>,
    edits: &mut Edits<'_, V>,
) -> Result<bool, AccessError> {
    let base = doc.input().as_ptr() as usize;
    let mut keys = Keys::with_capacity(doc, n);
    let mut walked = 0;
    for (raw, c) in doc.object_items(at)? {
        keys.push(raw);
        walked += 1;
        cuts.member(raw.as_ptr() as usize - base - 1, c.sidx, c.ord, edits);
    }
    cuts.finish(doc, edits);
    Ok(walked == n && keys.unique(doc)?)
}

/// [`splice_walk`]'s cuts, member by member in order: the pending run of
/// deleted members (its first key's quote and its last member) and the
/// last member kept before it. A member is its value's structural and the
/// ordinal of the first container at or after it (the value's cursor is
/// made only for the ends of cuts, `repeats::member_value`).
struct Cuts<'g> {
    /// The deleted members' value structurals, sorted.
    gone: &'g [u32],
    /// The first of them the walk has not passed yet (members come in
    /// order, so this is the next one it may meet).
    next: usize,
    run: Option<(usize, (u32, u32))>,
    kept: Option<(u32, u32)>,
}

impl Cuts<'_> {
    /// The member whose key's quote is at `key_at`, whose value is
    /// structural `vk` and whose next container is ordinal `ord`.
    #[inline(always)]
    fn member<V>(&mut self, key_at: usize, vk: u32, ord: u32, edits: &mut Edits<'_, V>) {
        // (A deleted member the walk never meets, which a patch of this
        // object cannot name, is passed over, not waited for.)
        while self.gone.get(self.next).is_some_and(|&g| g < vk) {
            self.next += 1;
        }
        if self.gone.get(self.next) == Some(&vk) {
            self.next += 1;
            self.run = Some((self.run.map_or(key_at, |(a, _)| a), (vk, ord)));
            return;
        }
        if let Some((a, _)) = self.run.take() {
            edits.push((a, key_at, Edit::Cut));
        }
        self.kept = Some((vk, ord));
    }

    /// After the last member: a run of deleted members that ends the
    /// object goes with the separator before it.
    fn finish<V>(&mut self, doc: &Doc<'_>, edits: &mut Edits<'_, V>) {
        if let Some((a, last)) = self.run.take() {
            let end_of = |(vk, ord): (u32, u32)| {
                doc.span(repeats::member_value(doc, vk as usize - 2, ord)).1
            };
            let end = end_of(last);
            let a = self.kept.map_or(a, end_of);
            edits.push((a, end, Edit::Cut));
        }
    }
}

/// What a splice puts at one place of the original bytes.
enum Edit<'v, V> {
    /// A replaced member's new value.
    Value(&'v V),
    /// An edited child view.
    Child(&'v V),
    /// Nothing: a deleted member and its separator.
    Cut,
}

/// A splice's edits: (start, end, what goes there), in any order.
type Edits<'v, V> = SmallVec<[(usize, usize, Edit<'v, V>); 4]>;

/// [`write_lazy_object`]'s splice: the object's bytes with each replaced
/// value and each edited child's span replaced, each deleted member cut
/// out with its separator ([`splice_walk`]), and the added members after
/// the last original one. `false`, with nothing written, when a key
/// repeats.
fn splice_object<O: Out>(
    doc: &Doc<'_>,
    at: Cursor,
    patches: &Patches<O::Key, O::Value>,
    edited: &Edited<'_, O::Value>,
    out: &mut O,
) -> Result<bool, O::Error> {
    let mut edits: Edits<'_, O::Value> = SmallVec::new();
    let Some(deleted) =
        splice_walk(doc, at, patches, edited, &mut edits).map_err(|e| access(out, e))?
    else {
        return Ok(false);
    };
    for p in patches.iter() {
        if let (Some(c), Some(v)) = (p.orig, &p.value) {
            edits.push((c.start as usize, doc.span(c).1, Edit::Value(v)));
        }
    }
    for &(c, v) in edited {
        // A replaced or deleted member's old child is not written.
        if patches.for_original(c.start).is_none() {
            edits.push((c.start as usize, doc.container_span(c).1, Edit::Child(v)));
        }
    }
    edits.sort_unstable_by_key(|&(a, ..)| a);
    let (mut pos, end) = doc.container_span(at);
    for (a, b, e) in edits {
        out.copy(pos, a);
        match e {
            Edit::Value(v) => out.value(v)?,
            Edit::Child(v) => out.child(v)?,
            Edit::Cut => {}
        }
        pos = b;
    }
    let mut added = patches.added().peekable();
    if added.peek().is_some() {
        let tail = doc.children_end(at).map_err(|e| access(out, e))?;
        out.copy(pos, tail);
        pos = tail;
        let mut first = doc.container_len(at) as usize == deleted;
        for (k, v) in added {
            if !first {
                out.byte(b',');
            }
            first = false;
            out.key(k)?;
            out.byte(b':');
            out.value(v)?;
        }
    }
    out.copy(pos, end);
    Ok(true)
}

/// An unfolded object, member by member.
pub fn write_members<O: Out>(
    doc: &Doc<'_>,
    _at: Cursor,
    members: &Members<O::Value>,
    out: &mut O,
) -> Result<(), O::Error> {
    out.byte(b'{');
    let mut runs = Runs::new(doc);
    for member in members.iter() {
        match &member.slot {
            Slot::Orig { at, i, view } => {
                runs.slot(out, *i, member.key_at as usize, *at, view.as_ref())?
            }
            Slot::New(v) => {
                runs.piece(out);
                out.key_text(&member.key);
                out.byte(b':');
                out.value(v)?;
            }
        }
    }
    runs.flush(out);
    out.byte(b'}');
    Ok(())
}

/// A lazy array (not unfolded) with the host's cached child values
/// `children` (edited or not). In a strict document its bytes with each
/// edited child's span replaced (the cost follows the edited children,
/// not the array's length: a request's `messages[0]` among thousands);
/// in a lazy one element by element, each validated.
pub fn write_lazy_array<'v, O: Out>(
    doc: &Doc<'_>,
    at: Cursor,
    children: impl IntoIterator<Item = &'v O::Value>,
    out: &mut O,
) -> Result<(), O::Error>
where
    O::Value: 'v,
{
    let mut edited: Edited<'v, O::Value> = SmallVec::new();
    edited_children(out, children, &mut edited)?;
    if !doc.index().is_lazy() {
        let (mut pos, end) = doc.container_span(at);
        for &(child, v) in &edited {
            out.copy(pos, child.start as usize);
            out.child(v)?;
            pos = doc.container_span(child).1;
        }
        out.copy(pos, end);
        return Ok(());
    }
    write_array_by_element(doc, at, &edited, out)
}

/// [`write_lazy_array`] in a lazy document: element by element, each
/// validated (out of line: documents are usually strict).
#[inline(never)]
fn write_array_by_element<O: Out>(
    doc: &Doc<'_>,
    at: Cursor,
    edited: &Edited<'_, O::Value>,
    out: &mut O,
) -> Result<(), O::Error> {
    out.byte(b'[');
    let mut runs = Runs::new(doc);
    let items = doc.array_items(at).map_err(|e| access(out, e))?;
    for (i, c) in items.enumerate() {
        runs.orig(out, i as u32, c.start as usize, c, edited_at(edited, c))?;
    }
    runs.flush(out);
    out.byte(b']');
    Ok(())
}

/// A lazy array (not unfolded) with elements inserted: `inserts` holds
/// each new element with the ordinal of the original element it goes
/// before (the array's length: after the last one), sorted by ordinal,
/// equal ordinals in their order in the array; `children` as for
/// [`write_lazy_array`]. The same bytes [`write_slots`] gives for the
/// unfolded array with the same elements (so a host may keep inserts
/// without unfolding the array, and another host may unfold it): in a
/// strict document the array's bytes with each group of new elements put
/// before the original element that follows it as `value,`, or after the
/// last original element as `,value` (right after `[` into an empty
/// array), and each edited child's span replaced; the cost follows the
/// inserts and edited children, not the array's length. In a lazy
/// document element by element, each original validated.
pub fn write_lazy_array_inserts<'v, O: Out>(
    doc: &Doc<'_>,
    at: Cursor,
    children: impl IntoIterator<Item = &'v O::Value>,
    inserts: &[(u32, O::Value)],
    out: &mut O,
) -> Result<(), O::Error>
where
    O::Value: 'v,
{
    let mut edited: Edited<'v, O::Value> = SmallVec::new();
    edited_children(out, children, &mut edited)?;
    if doc.index().is_lazy() {
        return write_inserts_by_element(doc, at, &edited, inserts, out);
    }
    let n = doc.container_len(at) as usize;
    let (mut pos, end) = doc.container_span(at);
    let mut children = edited.iter().peekable();
    // The edited children that start before byte `to`, in place.
    let mut children_before = |to: usize, pos: &mut usize, out: &mut O| {
        while let Some(&&(c, v)) = children.peek() {
            if c.start as usize >= to {
                break;
            }
            out.copy(*pos, c.start as usize);
            out.child(v)?;
            *pos = doc.container_span(c).1;
            children.next();
        }
        Ok(())
    };
    let mut k = 0;
    while k < inserts.len() {
        let b = inserts[k].0;
        let group_end = inserts[k..]
            .iter()
            .position(|&(o, _)| o != b)
            .map_or(inserts.len(), |d| k + d);
        let group = &inserts[k..group_end];
        k = group_end;
        // Where the original element that follows the group starts: the
        // first element's right after `[` and its whitespace (the usual
        // insert, at 0: no element lookup), any other's by the lookup.
        let before = if b == 0 && n > 0 {
            Some(skip_ws(doc.input(), at.start as usize + 1))
        } else if (b as usize) < n {
            doc.element(at, i64::from(b)).map(|c| c.start as usize)
        } else {
            None
        };
        match before {
            Some(start) => {
                children_before(start, &mut pos, out)?;
                out.copy(pos, start);
                pos = start;
                for (_, v) in group {
                    out.value(v)?;
                    out.byte(b',');
                }
            }
            None => {
                // After the last original element: every edited child
                // comes before.
                children_before(end, &mut pos, out)?;
                let tail = doc.children_end(at).map_err(|e| access(out, e))?;
                out.copy(pos, tail);
                pos = tail;
                let mut first = n == 0;
                for (_, v) in group {
                    if !first {
                        out.byte(b',');
                    }
                    first = false;
                    out.value(v)?;
                }
            }
        }
    }
    children_before(end, &mut pos, out)?;
    out.copy(pos, end);
    Ok(())
}

/// [`write_lazy_array_inserts`] in a lazy document: element by element,
/// each original validated (out of line: documents are usually strict).
#[inline(never)]
fn write_inserts_by_element<O: Out>(
    doc: &Doc<'_>,
    at: Cursor,
    edited: &Edited<'_, O::Value>,
    inserts: &[(u32, O::Value)],
    out: &mut O,
) -> Result<(), O::Error> {
    out.byte(b'[');
    let mut runs = Runs::new(doc);
    let mut k = 0;
    let items = doc.array_items(at).map_err(|e| access(out, e))?;
    for (i, c) in items.enumerate() {
        while k < inserts.len() && inserts[k].0 as usize <= i {
            runs.piece(out);
            out.value(&inserts[k].1)?;
            k += 1;
        }
        runs.orig(out, i as u32, c.start as usize, c, edited_at(edited, c))?;
    }
    for (_, v) in &inserts[k..] {
        runs.piece(out);
        out.value(v)?;
    }
    runs.flush(out);
    out.byte(b']');
    Ok(())
}

/// An unfolded array: spliced when `splice_slots` can, else element by
/// element.
pub fn write_slots<O: Out>(
    doc: &Doc<'_>,
    at: Cursor,
    slots: &[Slot<O::Value>],
    out: &mut O,
) -> Result<(), O::Error> {
    if splice_slots(doc, at, slots, out)? {
        return Ok(());
    }
    write_slots_by_element(doc, slots, out)
}

/// [`write_slots`] element by element (out of line: the splice is the
/// usual case).
#[inline(never)]
fn write_slots_by_element<O: Out>(
    doc: &Doc<'_>,
    slots: &[Slot<O::Value>],
    out: &mut O,
) -> Result<(), O::Error> {
    out.byte(b'[');
    let mut runs = Runs::new(doc);
    for slot in slots {
        match slot {
            Slot::Orig { at, i, view } => {
                runs.slot(out, *i, at.start as usize, *at, view.as_ref())?
            }
            Slot::New(v) => {
                runs.piece(out);
                out.value(v)?;
            }
        }
    }
    runs.flush(out);
    out.byte(b']');
    Ok(())
}

/// [`write_slots`]'s splice, for an array of a strict document that holds
/// all its original elements in their order (ordinals `0..n`, `n > 0`)
/// with new elements inserted among them (inserts and appends, the edits
/// of a request's `messages`): the array's bytes as written, each new
/// element put before the original one that follows it as `value,`, or
/// after the last original element as `,value`, each edited child's span
/// replaced. So the whitespace after `[`, between the original elements
/// and before `]` stays as written: `[\n  1,\n  2\n]` with `0` inserted
/// first and `3` appended gives `[\n  0,1,\n  2,3\n]`. An empty original
/// array gets its new elements right after `[`, the whitespace inside it
/// kept before `]` (`[ ]` with `1` appended is `[1 ]`), as an empty object
/// gets its added members. `false`, with nothing written, for any other
/// shape (a removed or replaced element, a lazy document).
fn splice_slots<O: Out>(
    doc: &Doc<'_>,
    at: Cursor,
    slots: &[Slot<O::Value>],
    out: &mut O,
) -> Result<bool, O::Error> {
    if doc.index().is_lazy() {
        return Ok(false);
    }
    let n = doc.container_len(at) as usize;
    let mut next = 0u32;
    for slot in slots {
        if let Slot::Orig { i, .. } = slot {
            if *i != next {
                return Ok(false);
            }
            next += 1;
        }
    }
    if next as usize != n {
        return Ok(false);
    }
    let (mut pos, end) = doc.container_span(at);
    // New elements waiting for the next original one.
    let mut first_new: Option<usize> = None;
    for (k, slot) in slots.iter().enumerate() {
        match slot {
            Slot::New(_) => {
                first_new.get_or_insert(k);
            }
            Slot::Orig { at: c, view, .. } => {
                let start = c.start as usize;
                let edited = match view {
                    Some(v) => out.edited(v)?.map(|_| v),
                    None => None,
                };
                if first_new.is_none() && edited.is_none() {
                    continue;
                }
                out.copy(pos, start);
                pos = start;
                if let Some(f) = first_new.take() {
                    for s in &slots[f..k] {
                        if let Slot::New(v) = s {
                            out.value(v)?;
                            out.byte(b',');
                        }
                    }
                }
                if let Some(v) = edited {
                    out.child(v)?;
                    pos = doc.container_span(*c).1;
                }
            }
        }
    }
    if let Some(f) = first_new {
        let tail = doc.children_end(at).map_err(|e| access(out, e))?;
        out.copy(pos, tail);
        pos = tail;
        // Into an empty array the first new element goes right after `[`
        // (its inner whitespace stays before `]`, as in an empty object).
        let mut first = n == 0;
        for s in &slots[f..] {
            if let Slot::New(v) = s {
                if !first {
                    out.byte(b',');
                }
                first = false;
                out.value(v)?;
            }
        }
    }
    out.copy(pos, end);
    Ok(true)
}
