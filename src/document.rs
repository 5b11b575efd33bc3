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
