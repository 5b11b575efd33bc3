//! Build script: with the `python` feature, expose PyO3's interpreter
//! cfgs (`Py_3_12`, ...) to this crate, so version-specific builds can read
//! CPython object layouts that changed between versions (`dumps` reads
//! small ints in place).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "python")]
    pyo3_build_config::use_pyo3_cfgs();
}
