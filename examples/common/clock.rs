//! The clock of the Rust microbenchmarks (`#[path]`-included by each
//! example that times rounds).

#[cfg(not(target_os = "linux"))]
use std::time::Instant;

/// Seconds of CPU time this thread has used (Linux), else wall time.
#[cfg(target_os = "linux")]
pub fn now() -> f64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec (two 64-bit fields on the
    // 64-bit Linux targets this runs on); the clock id is Linux's constant.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0);
    ts.sec as f64 + ts.nsec as f64 * 1e-9
}

#[cfg(not(target_os = "linux"))]
pub fn now() -> f64 {
    use std::sync::OnceLock;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}
