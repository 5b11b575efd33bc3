//! The vector instruction sets of this CPU, detected once per process, and
//! the `QJSON_BACKEND` override, for every SIMD kernel at once.
//!
//! Each kernel that needs more than the target's baseline is compiled
//! twice or more (`#[target_feature]` builds) and picks its build from
//! [`kernels`]:
//!
//! | kernel | builds |
//! |---|---|
//! | stage-1 scan and token scan (`scan`) | AVX-512 (BW, VBMI, VBMI2), AVX2, NEON, scalar |
//! | stage-2 walks (`index`, `index::tokens`) | AVX2 + BMI1/BMI2/LZCNT, baseline |
//! | string escaping (`encode::escape`) | AVX-512BW, baseline (16-byte blocks) |
//!
//! The level is one of [`Backend`]: the best this CPU runs, or the one
//! `QJSON_BACKEND=scalar|avx2|avx512|neon` names, which caps every kernel
//! at that level (`scalar` runs none of the builds above; `avx2` runs no
//! AVX-512 build). A level this CPU cannot run falls back to detection.
//! The baseline itself always runs: on x86_64 that includes SSE2 (the
//! whitespace masks of `lex`, the digit masks of the stage-2 walks).
//!
//! Detection happens on the first call of [`kernels`] and is cached; later
//! calls cost one load.

use std::sync::OnceLock;

/// A level of vector instructions, named as `QJSON_BACKEND` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Scalar,
    Avx2,
    Avx512,
    Neon,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
            Backend::Neon => "neon",
        }
    }

    /// Every level this CPU can run, best first (scalar always last).
    pub fn available() -> Vec<Backend> {
        features().levels()
    }
}

/// What the CPU has, grouped as the kernels' builds need it. Each field
/// lists exactly the features of the `#[target_feature]` build it guards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Features {
    /// `scan::avx512`: avx512f, avx512bw, avx512vbmi, avx512vbmi2,
    /// pclmulqdq, popcnt, bmi1.
    pub avx512_scan: bool,
    /// `scan::avx2`: avx2, pclmulqdq, popcnt, bmi1.
    pub avx2_scan: bool,
    /// The AVX2 builds of the stage-2 walks: avx2, bmi1, bmi2, lzcnt, popcnt.
    pub avx2_walk: bool,
    /// The AVX-512 build of string escaping: avx512f, avx512bw.
    pub avx512_escape: bool,
    /// `scan::neon`: neon, pmull.
    pub neon_scan: bool,
}

impl Features {
    /// The scan levels these features run, best first.
    fn levels(self) -> Vec<Backend> {
        let mut v = Vec::new();
        if self.avx512_scan {
            v.push(Backend::Avx512);
        }
        if self.avx2_scan {
            v.push(Backend::Avx2);
        }
        if self.neon_scan {
            v.push(Backend::Neon);
        }
        v.push(Backend::Scalar);
        v
    }
}

/// The builds every kernel uses in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernels {
    /// The level, which is also the stage-1 scan's backend.
    pub backend: Backend,
    /// The stage-2 walks run their AVX2 build.
    pub avx2_walk: bool,
    /// String escaping runs its AVX-512BW build.
    pub avx512_escape: bool,
}

/// Detect the CPU's features (uncached).
fn detect() -> Features {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let base = has!("pclmulqdq") && has!("popcnt") && has!("bmi1");
        Features {
            avx512_scan: base
                && has!("avx512f")
                && has!("avx512bw")
                && has!("avx512vbmi")
                && has!("avx512vbmi2"),
            avx2_scan: base && has!("avx2"),
            avx2_walk: has!("avx2")
                && has!("bmi1")
                && has!("bmi2")
                && has!("lzcnt")
                && has!("popcnt"),
            avx512_escape: has!("avx512f") && has!("avx512bw"),
            neon_scan: false,
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        use std::arch::is_aarch64_feature_detected as has;
        Features {
            neon_scan: has!("neon") && has!("pmull"),
            ..Features::default()
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    Features::default()
}

/// This CPU's features, detected once.
pub(crate) fn features() -> Features {
    static FEATURES: OnceLock<Features> = OnceLock::new();
    *FEATURES.get_or_init(detect)
}

/// The builds for `features` at the level `forced` names (`QJSON_BACKEND`),
/// or at the best level when it names none these features run.
pub(crate) fn choose(features: Features, forced: Option<&str>) -> Kernels {
    let levels = features.levels();
    let backend = forced
        .and_then(|want| levels.iter().find(|b| b.name() == want.trim()))
        .copied()
        .unwrap_or(levels[0]);
    Kernels {
        backend,
        avx2_walk: features.avx2_walk && matches!(backend, Backend::Avx2 | Backend::Avx512),
        avx512_escape: features.avx512_escape && backend == Backend::Avx512,
    }
}

/// The builds every kernel uses in this process (detected once, capped by
/// `QJSON_BACKEND`).
#[inline]
pub fn kernels() -> Kernels {
    static KERNELS: OnceLock<Kernels> = OnceLock::new();
    *KERNELS.get_or_init(|| choose(features(), std::env::var("QJSON_BACKEND").ok().as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Features = Features {
        avx512_scan: true,
        avx2_scan: true,
        avx2_walk: true,
        avx512_escape: true,
        neon_scan: false,
    };

    #[test]
    fn a_forced_level_caps_every_kernel() {
        let k = choose(ALL, None);
        assert_eq!(
            (k.backend, k.avx2_walk, k.avx512_escape),
            (Backend::Avx512, true, true)
        );
        let k = choose(ALL, Some("avx512"));
        assert_eq!(
            (k.backend, k.avx2_walk, k.avx512_escape),
            (Backend::Avx512, true, true)
        );
        let k = choose(ALL, Some(" avx2\n"));
        assert_eq!(
            (k.backend, k.avx2_walk, k.avx512_escape),
            (Backend::Avx2, true, false)
        );
        let k = choose(ALL, Some("scalar"));
        assert_eq!(
            (k.backend, k.avx2_walk, k.avx512_escape),
            (Backend::Scalar, false, false)
        );
    }

    #[test]
    fn an_unavailable_level_falls_back_to_detection() {
        let avx2_only = Features {
            avx512_scan: false,
            avx512_escape: false,
            ..ALL
        };
        for forced in [None, Some("avx512"), Some("neon"), Some("bogus"), Some("")] {
            let k = choose(avx2_only, forced);
            assert_eq!(
                (k.backend, k.avx2_walk, k.avx512_escape),
                (Backend::Avx2, true, false)
            );
        }
        // A feature a build needs and the CPU lacks stays off at any level.
        let no_bmi2 = Features {
            avx2_walk: false,
            ..avx2_only
        };
        assert!(!choose(no_bmi2, None).avx2_walk);
        assert_eq!(
            choose(Features::default(), Some("avx2")).backend,
            Backend::Scalar
        );
    }

    #[test]
    fn detected_levels_end_with_scalar_and_include_the_active_one() {
        let levels = Backend::available();
        assert_eq!(levels.last(), Some(&Backend::Scalar));
        assert!(levels.contains(&kernels().backend));
        // What the process uses never exceeds what the CPU has.
        let f = features();
        assert!(!kernels().avx2_walk || f.avx2_walk);
        assert!(!kernels().avx512_escape || f.avx512_escape);
    }
}
