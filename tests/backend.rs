//! `QJSON_BACKEND=scalar` turns off every SIMD build, not only the scanner's,
//! and the answers stay the same. One test in its own binary: the level is
//! chosen once per process, on first use, so the variable is set before
//! anything of qjson runs.

use qjson::cpu::{kernels, Backend};
use qjson::{Document, ErrorKind, Options};

#[test]
fn forced_scalar_caps_every_kernel_and_changes_no_answer() {
    std::env::set_var("QJSON_BACKEND", "scalar");
    let k = kernels();
    assert_eq!(k.backend, Backend::Scalar);
    assert!(!k.avx2_walk, "stage-2 walks still use their AVX2 build");
    assert!(!k.avx512_escape, "escaping still uses its AVX-512 build");
    assert_eq!(qjson::scan::active_backend(), Backend::Scalar);

    let long = "x".repeat(100) + "\"\\\n\u{1}é" + &"y".repeat(100);
    let text = format!(
        "{{\"a\": [1, 2.5, -3e4, true, null], \"s\": {}, \"o\": {{\"k\": \"v\"}}}}",
        serde_json::to_string(&long).unwrap()
    );
    let doc = Document::parse(text.as_bytes(), &Options::default()).unwrap();
    let d = doc.doc();
    assert_eq!(d.get_str(d.root(), "s").unwrap(), long);
    assert_eq!(d.get_f64(d.root(), "a[2]").unwrap(), -3e4);
    assert_eq!(d.get_str(d.root(), "o.k").unwrap(), "v");
    assert!(qjson::index::validate(text.as_bytes(), &Options::default()).is_ok());
    let bad = qjson::index::validate(b"[1, 2,]", &Options::default()).unwrap_err();
    assert_eq!((bad.kind, bad.offset), (ErrorKind::ExpectedValue, 6));

    let mut out = Vec::new();
    qjson::encode::escape::write_str(&mut out, long.as_bytes());
    assert_eq!(out, serde_json::to_string(&long).unwrap().into_bytes());
}
