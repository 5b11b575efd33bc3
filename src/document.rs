//! The document: an input, its index and the child tables its reads build,
//! held together.
//!
//! [`crate::Doc`] is the read API, a `Copy` view over borrowed parts. A
//! host that keeps a document across calls (the Python `Doc` and its views,
//! the C ABI's `qjson_doc`) stores a [`Document`] and takes a `Doc` from it
//! per read. The document owns the index and the child-table cache (see
//! [`crate::doc`]: large containers read again and again get a table of
//! their children), so the cache lives and dies with the document and
//! every read through it shares it.
//!
//! It is generic over how the input is held: the Python edge keeps the
//! caller's `bytes` (or a copy of a `str`) alive in its own input type, the
//! C ABI holds a raw pointer the caller keeps valid, Rust callers may pass
//! a `Vec<u8>` or a `&[u8]`. Anything that gives the same bytes on every
//! call of `AsRef<[u8]>` will do.

use crate::doc::{Doc, Tables};
use crate::error::Error;
use crate::index::{Index, Options};
use std::sync::Arc;

/// An input, its index and its child-table cache.
///
/// ```
/// use qjson::{Document, Options};
/// let doc = Document::parse(br#"{"a": [1, 2]}"#.to_vec(), &Options::default()).unwrap();
/// let d = doc.doc();
/// assert_eq!(d.len(d.root()).unwrap(), 1);
/// ```
#[derive(Debug)]
pub struct Document<I> {
    /// The bytes the index was built from.
    pub(crate) input: I,
    pub(crate) index: Index,
    /// Child tables of large containers, built by the reads (see `doc`).
    tables: Tables,
}

impl<I: AsRef<[u8]>> Document<I> {
    /// Index `input` (strict or lazy, as `opts` says) and keep both.
    pub fn parse(input: I, opts: &Options) -> Result<Document<I>, Error> {
        let index = Index::build(input.as_ref(), opts)?;
        Ok(Document::new(input, index))
    }

    /// Pair an input with the index built from it. Another input is a logic
    /// error (wrong answers or `AccessError`s), never memory-unsafe.
    pub fn new(input: I, index: Index) -> Document<I> {
        Document {
            input,
            index,
            tables: Tables::default(),
        }
    }

    /// [`Document::new`] straight into a new `Arc`, for the hosts that
    /// share a document (the Python `Doc` and its views).
    ///
    /// `Arc::new(Document::new(..))` builds the document (its input, index
    /// and the child-table cache with its inline memo, some 460 bytes) on
    /// the stack and then copies it into the allocation: the allocator is
    /// called between the two, so the compiler cannot build it in place.
    /// Here the allocation comes first and each field is written into it
    /// once (measured, callgrind LTO, `qjson.parse` of a 50-byte document:
    /// the `memcpy` of 76 instructions per parse goes).
    pub fn new_arc(input: I, index: Index) -> Arc<Document<I>> {
        // Every field is written below; a field added to `Document` stops
        // the build here until it is written too.
        #[allow(dead_code)]
        fn every_field<I>(d: Document<I>) {
            let Document {
                input: _,
                index: _,
                tables: _,
            } = d;
        }
        let mut arc = Arc::<Document<I>>::new_uninit();
        let slot = Arc::get_mut(&mut arc).expect("a new Arc is unique");
        let p = slot.as_mut_ptr();
        // SAFETY: `p` points to the new allocation, valid for writes and
        // aligned for a `Document<I>`, and nothing else refers to it
        // (`get_mut` succeeded). Each field is written exactly once
        // through `addr_of_mut!` (no reference to the uninitialised
        // value is made), so after the three writes the whole value is
        // initialised and `assume_init` is sound. Nothing between the
        // writes can panic, so no field is leaked half-built.
        unsafe {
            std::ptr::addr_of_mut!((*p).input).write(input);
            std::ptr::addr_of_mut!((*p).index).write(index);
            std::ptr::addr_of_mut!((*p).tables).write(Tables::default());
            arc.assume_init()
        }
    }

    /// The read API over this document.
    #[inline]
    pub fn doc(&self) -> Doc<'_> {
        Doc::with_tables(self.input.as_ref(), &self.index, &self.tables)
    }

    /// The input as it was given.
    pub fn input(&self) -> &I {
        &self.input
    }

    /// The index.
    pub fn index(&self) -> &Index {
        &self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// An input that counts its drops.
    struct Counted<'a>(Vec<u8>, &'a AtomicUsize);

    impl AsRef<[u8]> for Counted<'_> {
        fn as_ref(&self) -> &[u8] {
            &self.0
        }
    }

    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            self.1.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// `new_arc` holds the same document as `new`, reads through its
    /// tables like it, and drops its input exactly once with the last `Arc`.
    #[test]
    fn new_arc_is_new_in_an_arc() {
        let drops = AtomicUsize::new(0);
        for text in [
            &b"[]"[..],
            b" 7 ",
            br#"{"a": [1, 2, {"b": "c"}], "d": null}"#,
        ] {
            let opts = Options::default();
            let index = Index::build(text, &opts).unwrap();
            let shared = Document::new_arc(Counted(text.to_vec(), &drops), index);
            let plain = Document::parse(text.to_vec(), &opts).unwrap();
            assert_eq!(shared.input().as_ref(), text);
            assert_eq!(
                shared.index().structurals,
                plain.index().structurals,
                "{text:?}"
            );
            let (a, b) = (shared.doc(), plain.doc());
            assert_eq!(a.raw(a.root()), b.raw(b.root()));
            assert_eq!(a.len(a.root()).ok(), b.len(b.root()).ok());
            let other = Arc::clone(&shared);
            let before = drops.load(Ordering::Relaxed);
            drop(shared);
            assert_eq!(drops.load(Ordering::Relaxed), before);
            drop(other);
            assert_eq!(drops.load(Ordering::Relaxed), before + 1);
        }
        assert_eq!(drops.load(Ordering::Relaxed), 3);
    }
}
