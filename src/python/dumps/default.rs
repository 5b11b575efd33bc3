//! The `default=` hook: called for an object no other rule covers, and its
//! result written in its place (recursively, up to
//! [`MAX_DEFAULT_DEPTH`] calls in a chain); without a hook such an object
//! raises `JSONEncodeError`.

use super::error::{encode_error, encode_error_from};
use super::Serializer;
use pyo3::prelude::*;

/// `default=` calls may nest this deep (a value `default` returned needing
/// `default` again is one level deeper); the next one raises. orjson's
/// limit: 255 calls in a chain, so a hook that returns a further object 254
/// times succeeds.
const MAX_DEFAULT_DEPTH: u32 = 255;

impl<'py> Serializer<'py> {
    /// The `default=` hook for an object no rule covers.
    pub(super) fn call_default<const PRETTY: bool>(
        &mut self,
        obj: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let name = || {
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "?".into())
        };
        let Some(default) = self.default.clone() else {
            return Err(encode_error(
                self.py,
                &format!("Type is not JSON serializable: {}", name()),
            ));
        };
        if self.default_depth >= MAX_DEFAULT_DEPTH {
            return Err(encode_error(
                self.py,
                "default serializer exceeds recursion limit",
            ));
        }
        let v = default.call1((obj,)).map_err(|cause| {
            encode_error_from(
                self.py,
                &format!("Type is not JSON serializable: {}", name()),
                cause,
            )
        })?;
        self.default_depth += 1;
        let r = self.value::<PRETTY>(v.as_ptr());
        self.default_depth -= 1;
        r
    }
}
