//! Per-component random streams.
//!
//! Every component draws from its own stream, derived from the master seed and the component's
//! dotted path (`"net.router.12"`), so adding a draw in one component never changes the numbers
//! another one sees, and results do not depend on the order components are built or visited.
//!
//! The generator is xoshiro256++ from `rand_xoshiro` pinned to an exact version (`=0.7.0`), seeded
//! through its SplitMix64 `seed_from_u64`. The per-path seed is
//! `splitmix64(master ^ splitmix64(fnv1a64(path)))`; FNV-1a and SplitMix64 are written out here so
//! that no hasher whose output may change between Rust releases is involved.

use rand::SeedableRng;
pub use rand_xoshiro::Xoshiro256PlusPlus;

/// The random generator every podsim component uses.
pub type SimRng = Xoshiro256PlusPlus;

/// FNV-1a, 64-bit: a fixed, documented hash of a path.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The SplitMix64 finaliser (Steele, Lea and Flood, 2014).
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The source of every random stream of one simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RngStreams {
    master: u64,
}

impl RngStreams {
    /// Streams derived from `master_seed`.
    pub const fn new(master_seed: u64) -> Self {
        RngStreams {
            master: master_seed,
        }
    }

    /// The master seed.
    pub const fn master_seed(self) -> u64 {
        self.master
    }

    /// The seed of the stream of the component at `path`.
    pub fn seed_for(self, path: &str) -> u64 {
        splitmix64(self.master ^ splitmix64(fnv1a64(path.as_bytes())))
    }

    /// A fresh generator for the component at `path`; the same path always gives the same stream.
    pub fn stream(self, path: &str) -> SimRng {
        SimRng::seed_from_u64(self.seed_for(path))
    }
}
