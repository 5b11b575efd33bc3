/work/main/target/debug/deps/qjson.d: src/lib.rs src/decode/mod.rs src/decode/number.rs src/decode/string.rs src/doc.rs src/error.rs src/index.rs src/path.rs src/scan/mod.rs src/scan/scalar.rs

/work/main/target/debug/deps/libqjson.so: src/lib.rs src/decode/mod.rs src/decode/number.rs src/decode/string.rs src/doc.rs src/error.rs src/index.rs src/path.rs src/scan/mod.rs src/scan/scalar.rs

/work/main/target/debug/deps/libqjson.rlib: src/lib.rs src/decode/mod.rs src/decode/number.rs src/decode/string.rs src/doc.rs src/error.rs src/index.rs src/path.rs src/scan/mod.rs src/scan/scalar.rs

src/lib.rs:
src/decode/mod.rs:
src/decode/number.rs:
src/decode/string.rs:
src/doc.rs:
src/error.rs:
src/index.rs:
src/path.rs:
src/scan/mod.rs:
src/scan/scalar.rs:
