/*
 * qjson.h - the C ABI of qjson: a SIMD structural index over JSON text,
 * path reads, and the original bytes of any value.
 *
 * Built by `cargo build --release --no-default-features` as
 * target/release/libqjson.so (no Python symbols); the Python extension
 * module qjson/_qjson*.so exports the same functions.
 *
 * Model
 *   - qjson_parse indexes the input and returns a document. The input is
 *     BORROWED, not copied: keep it alive and unchanged until qjson_free.
 *   - A value is named by a qjson_cursor (plain data, copy it freely; valid
 *     while its document lives). Reads take a base cursor (NULL = the root)
 *     and a path relative to it, length-delimited (not NUL-terminated):
 *     "" is the base itself, `messages[2].content` and `a["b.c"][-1]` are
 *     dotted paths, and a leading `/` makes an RFC 6901 JSON Pointer.
 *   - Every function returns a status code; results go to out-parameters.
 *     On failure, qjson_last_error gives the status, a byte offset and a
 *     message (kept per thread).
 *   - Strings come back as pointer + length (not NUL-terminated): into the
 *     input when the JSON string has no escapes, otherwise into a per-thread
 *     buffer valid until the next qjson call on the same thread.
 *   - No function unwinds or aborts: an internal bug is QJSON_ERR_PANIC.
 *   - A document may be read from several threads at once.
 *
 * The declarations between QJSON_CDEF_BEGIN and QJSON_CDEF_END are also the
 * ffi.cdef of qjson.lua (a test compares them, whitespace and comments
 * aside): keep them plain C that LuaJIT's FFI parses.
 */
#ifndef QJSON_H
#define QJSON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes (the return value of every function but the last three). */
#define QJSON_OK            0 /* success */
#define QJSON_END           1 /* qjson_iter_next: no more children */
#define QJSON_ERR_NOT_FOUND 2 /* a well-formed path that names nothing */
#define QJSON_ERR_TYPE      3 /* a typed getter met another type */
#define QJSON_ERR_PATH      4 /* a malformed path (or one that is not UTF-8) */
#define QJSON_ERR_JSON      5 /* invalid JSON (at parse, or read lazily) */
#define QJSON_ERR_ARG       6 /* a NULL where a pointer is required */
#define QJSON_ERR_PANIC     7 /* an internal error, caught at the boundary */

/* Type codes (qjson_cursor.type, qjson_typeof). */
#define QJSON_OBJECT 1
#define QJSON_ARRAY  2
#define QJSON_STRING 3
#define QJSON_NUMBER 4
#define QJSON_BOOL   5
#define QJSON_NULL   6

/* QJSON_CDEF_BEGIN */

/* A parsed document (opaque). */
typedef struct qjson_doc qjson_doc;

/* Parse options; pass NULL for the defaults. */
typedef struct qjson_options {
    int lazy;           /* nonzero: check only structure and depth; value
                           errors surface when the value is read */
    uint32_t max_depth; /* maximum nesting; 0 means the default, 1024 */
} qjson_options;

/* One value of a document: the first three fields locate it, `type` is
   its QJSON_OBJECT ... QJSON_NULL code. */
typedef struct qjson_cursor {
    uint32_t start;
    uint32_t sidx;
    uint32_t ord;
    uint32_t type;
} qjson_cursor;

/* A walk over the children of an object or array (opaque state). */
typedef struct qjson_iter {
    uint32_t opaque[6];
} qjson_iter;

/* Index `len` bytes at `input` (borrowed until qjson_free) into *out.
   Strict by default: the whole input is validated against RFC 8259.
   Fails with QJSON_ERR_JSON (offset: the byte where the problem is). */
int qjson_parse(const char *input, size_t len, const qjson_options *opts,
                qjson_doc **out);

/* Destroy a document (NULL is ignored). Its cursors become invalid. */
void qjson_free(qjson_doc *doc);

/* qjson_parse, then the root's cursor into *root and qjson_memory's answer
   into *memory: one call for a host that wraps the root at once. On
   failure no document is made. */
int qjson_parse_root(const char *input, size_t len, const qjson_options *opts,
                     qjson_doc **out, qjson_cursor *root, size_t *memory);

/* Bytes of heap the document holds (its index): for a garbage collector
   that should account for it. 0 for NULL. */
size_t qjson_memory(const qjson_doc *doc);

/* Resolve `path` from `at` (NULL: the root) into *out. */
int qjson_find(const qjson_doc *doc, const qjson_cursor *at,
               const char *path, size_t path_len, qjson_cursor *out);

/* Member `key` (exact unescaped bytes, no path syntax) of the object `at`
   (NULL: the root); the first one when a key repeats. QJSON_ERR_TYPE when
   `at` is not an object. */
int qjson_field(const qjson_doc *doc, const qjson_cursor *at,
                const char *key, size_t key_len, qjson_cursor *out);

/* Element `i` (0-based, negative counts from the end) of the array `at`
   (NULL: the root). QJSON_ERR_TYPE when `at` is not an array. */
int qjson_index(const qjson_doc *doc, const qjson_cursor *at, int64_t i,
                qjson_cursor *out);

/* A child with its value, in one call (what a lazy proxy's read needs):
   member `key` (as qjson_field) or element `i` (as qjson_index) into
   out->at, and for a scalar its value: a string's unescaped bytes in
   out->str / out->len (as qjson_get_str: into the input, or into the
   per-thread buffer), a number as a double in out->num (as qjson_get_f64),
   a boolean as 0 or 1 in out->num; for an object or array, its number of
   members or elements in out->len. Errors as the two calls it replaces. */
typedef struct qjson_value {
    qjson_cursor at;
    const char *str;
    size_t len;
    double num;
} qjson_value;
int qjson_field_value(const qjson_doc *doc, const qjson_cursor *at,
                      const char *key, size_t key_len, qjson_value *out);
int qjson_index_value(const qjson_doc *doc, const qjson_cursor *at, int64_t i,
                      qjson_value *out);

/* Typed getters: the value at `path` from `at` (NULL: the root).
   QJSON_ERR_TYPE when it has another type. */

/* The unescaped UTF-8 bytes of a string (see "Strings" above). */
int qjson_get_str(const qjson_doc *doc, const qjson_cursor *at,
                  const char *path, size_t path_len,
                  const char **out, size_t *out_len);
/* An integer, exactly: no fraction, no exponent, within int64. */
int qjson_get_i64(const qjson_doc *doc, const qjson_cursor *at,
                  const char *path, size_t path_len, int64_t *out);
/* Any number, as a correctly rounded double. */
int qjson_get_f64(const qjson_doc *doc, const qjson_cursor *at,
                  const char *path, size_t path_len, double *out);
/* true or false, as 1 or 0. */
int qjson_get_bool(const qjson_doc *doc, const qjson_cursor *at,
                   const char *path, size_t path_len, int *out);
/* QJSON_OK when the value is null (QJSON_ERR_TYPE for another type; a
   lazy document's malformed scalar, such as `nulll`, is QJSON_ERR_JSON
   with the strict parser's error and offset). */
int qjson_get_null(const qjson_doc *doc, const qjson_cursor *at,
                   const char *path, size_t path_len);
/* The type code of any value. */
int qjson_typeof(const qjson_doc *doc, const qjson_cursor *at,
                 const char *path, size_t path_len, int *out);
/* The number of members or elements of an object or array. */
int qjson_len(const qjson_doc *doc, const qjson_cursor *at,
              const char *path, size_t path_len, size_t *out);
/* The byte range [*start, *end) of the value's original text in the
   input, without surrounding whitespace. */
int qjson_span(const qjson_doc *doc, const qjson_cursor *at,
               const char *path, size_t path_len,
               size_t *start, size_t *end);

/* Wildcard reads: every value `path` matches from `at` (NULL: the root), in
   document order, with `[*]` (every element of an array) and `.*` or a
   leading `*` (every member value of an object; a repeated key counts
   once, with its first value). Branches that do not match are skipped.
   *n cursors at *out, in a per-thread buffer valid until the next
   qjson_get_all / qjson_path_get_all call on the same thread. */
int qjson_get_all(const qjson_doc *doc, const qjson_cursor *at,
                  const char *path, size_t path_len,
                  const qjson_cursor **out, size_t *n);

/* A compiled path (opaque, immutable: share it across documents and
   threads). qjson_path_new fails with QJSON_ERR_PATH when the text is
   malformed; qjson_path_free(NULL) is ignored. */
typedef struct qjson_path qjson_path;
int qjson_path_new(const char *text, size_t len, qjson_path **out);
void qjson_path_free(qjson_path *path);
/* qjson_find by a compiled path (QJSON_ERR_PATH when it has a wildcard). */
int qjson_path_find(const qjson_doc *doc, const qjson_cursor *at,
                    const qjson_path *path, qjson_cursor *out);
/* qjson_get_all by a compiled path. */
int qjson_path_get_all(const qjson_doc *doc, const qjson_cursor *at,
                       const qjson_path *path,
                       const qjson_cursor **out, size_t *n);

/* Start a walk over the children of the object or array at `path`. */
int qjson_iter_init(const qjson_doc *doc, const qjson_cursor *at,
                    const char *path, size_t path_len, qjson_iter *it);
/* The next child: QJSON_OK with its value in *value and, for objects, its
   unescaped key in *key / *key_len (NULL / 0 for arrays; both may be NULL
   when the key is not wanted), or QJSON_END after the last one. */
int qjson_iter_next(const qjson_doc *doc, qjson_iter *it,
                    const char **key, size_t *key_len, qjson_cursor *value);

/* The last failure on this thread: its message (NUL-terminated, valid until
   the next failing call on this thread), and its status and offset when
   `status` / `offset` are not NULL. The offset is into the input for
   QJSON_ERR_JSON, into the path for QJSON_ERR_NOT_FOUND / QJSON_ERR_PATH,
   0 otherwise. */
const char *qjson_last_error(int *status, size_t *offset);

/* The library version, e.g. "0.1.0" (static). */
const char *qjson_version(void);

/* The SIMD backend in use: "avx512", "avx2", "neon" or "scalar" (static). */
const char *qjson_backend(void);

/* Many documents (NDJSON / JSON Lines, or JSON texts separated by any
   whitespace) in one buffer, borrowed like qjson_parse's input: keep it
   alive and unchanged until the stream and every document taken from it
   are freed. */
typedef struct qjson_many qjson_many;
int qjson_many_new(const char *input, size_t len, const qjson_options *opts,
                   qjson_many **out);
/* The next document: QJSON_OK with a new document in *out (free it with
   qjson_free), QJSON_END after the last one, or QJSON_ERR_JSON for a
   document that is not valid JSON (qjson_last_error: message and byte
   offset in the whole input); the next call goes on after it. *index (if
   not NULL) receives the document's 0-based ordinal, failed ones counted,
   and *start (if not NULL) the input offset the document's offsets count
   from. */
int qjson_many_next(qjson_many *m, qjson_doc **out, uint64_t *index,
                    size_t *start);
/* Destroy a stream (NULL is ignored); its documents stay valid. */
void qjson_many_free(qjson_many *m);
/* A stream whose input comes one window at a time (a chunked reader):
   `window` is the most bytes one scan covers (0: the default). */
int qjson_many_stream(const qjson_options *opts, size_t window,
                      qjson_many **out);
/* The next window, once qjson_many_next said QJSON_END: the bytes of the
   last window from qjson_many_consumed on, then more input (borrowed like
   qjson_many_new's input); at_end nonzero when nothing follows. Offsets
   (*start, error offsets) of its documents count from its first byte. */
int qjson_many_window(qjson_many *m, const char *input, size_t len,
                      int at_end);
/* How many bytes of the current window the documents taken so far used. */
size_t qjson_many_consumed(const qjson_many *m);

/* The Lua encoder's strings: `len` bytes at `s` written at `out` as
   lua-cjson writes them (`"`, `\\`, `/`, bytes below 0x20 and DEL
   escaped; other bytes copied), returning the number of bytes written.
   qjson_cjson_string adds the quotes and needs room for 6 * len + 2 bytes;
   qjson_cjson_escape writes no quotes and needs 6 * len. */
size_t qjson_cjson_string(const char *s, size_t len, char *out);
size_t qjson_cjson_escape(const char *s, size_t len, char *out);
/* Copy `len` bytes (the ranges do not overlap) without glibc's `rep movsb`,
   which AMD Zen 3 runs several times slower at some relative offsets of
   the two buffers: the Lua encoder's copies of large input spans. */
void qjson_copy(char *dst, const char *src, size_t len);
/* The compact form of the JSON text at `input` (parsed strictly): no
   whitespace, strings escaped again (only `"`, `\\` and control bytes),
   integers as their value, other numbers as the shortest text of their
   double (one out of the double range, 1e400, as written), each key of an
   object once (its first value): what a host writes
   for the value once decoded and encoded again. *out / *out_len: the text,
   valid until the next qjson_compact call on this thread. */
int qjson_compact(const char *input, size_t len, const char **out,
                  size_t *out_len);

/* Edits for hosts that keep their own values (qjson.lua's proxies): one
   state per edited object or array, naming host values by ids > 0.
   Objects: qjson_edit_set (*added, if not NULL: 1 when the key's patch
   adds a member, 0 when it replaces one) / qjson_edit_delete
   (QJSON_NOT_FOUND when the key is absent) keep the engine's patches
   (src/edit/), as Python's views do. Arrays
   (0-based positions): qjson_edit_slot answers an original element's
   ordinal (>= 0) or a host value (-id); put / insert / remove change the
   slots (QJSON_ERR_ARG out of range). qjson_edit_changed: 1 when the
   state holds changes. qjson_edit_plan writes the container as segments
   (valid until the next plan or free of the state): kind 0 = `len` bytes
   at `p`, 1 = host value `id`, 2 = the dirty child view views[id]; the
   bytes are those the Python views write for the same edits. */
typedef struct qjson_edit qjson_edit;
typedef struct qjson_seg {
    const char *p;
    size_t len;
    uint32_t kind;
    uint32_t id;
} qjson_seg;
int qjson_edit_new(const qjson_doc *doc, const qjson_cursor *at,
                   qjson_edit **out);
/* For a light edit of an object (one member replaced by splicing its value's
   text): [spans[0], spans[1]) = the object's byte range, [spans[2],
   spans[3]) = the byte range of member key's value, when the object's keys are distinct and few enough
   for a member table (so that an edit state's plan would splice the value
   in place too). QJSON_NOT_FOUND when the key is absent or the object is
   not such an object; no edit state is made. */
int qjson_member_span(const qjson_doc *doc, const qjson_cursor *at,
                      const char *key, size_t len, size_t *spans);

/* As qjson_edit_new, but the state belongs to doc: qjson_free(doc) frees it
   (never pass it to qjson_edit_free). */
int qjson_edit_new_owned(const qjson_doc *doc, const qjson_cursor *at,
                         qjson_edit **out);
void qjson_edit_free(qjson_edit *e);
int qjson_edit_changed(const qjson_edit *e);
int qjson_edit_len(const qjson_doc *doc, qjson_edit *e, size_t *out);
int qjson_edit_set(const qjson_doc *doc, qjson_edit *e, const char *key,
                   size_t len, uint32_t id, int *added);
int qjson_edit_delete(const qjson_doc *doc, qjson_edit *e, const char *key,
                      size_t len);
int qjson_edit_slot(const qjson_doc *doc, qjson_edit *e, size_t i,
                    int64_t *out);
int qjson_edit_put(const qjson_doc *doc, qjson_edit *e, size_t i, uint32_t id);
int qjson_edit_insert(const qjson_doc *doc, qjson_edit *e, size_t i,
                      uint32_t id);
int qjson_edit_remove(const qjson_doc *doc, qjson_edit *e, size_t i);
int qjson_edit_plan(const qjson_doc *doc, qjson_edit *e,
                    const qjson_cursor *views, size_t nviews,
                    const qjson_seg **segs, size_t *nsegs);
/* qjson_edit_save keeps a copy of the state's edits inside it (replacing
   any saved before); qjson_edit_restore puts it back (QJSON_NOT_FOUND when
   none is saved): an atomic sequence of edits without a state to free. */
int qjson_edit_save(qjson_edit *e);
int qjson_edit_restore(qjson_edit *e);
/* qjson_edit_reset drops every edit of the state (and any saved copy): the
   state is as new, for a host that undoes the first edits of a container
   and keeps the state to reuse. */
int qjson_edit_reset(qjson_edit *e);

/* QJSON_CDEF_END */

#ifdef __cplusplus
}
#endif

#endif /* QJSON_H */
