//! The requests' random numbers (SPEC §3.1): Marsaglia's xorshift128 with the SPEC's seed,
//! `fastRand(n)` and `fastRandDouble(r)` as the C++ suite defines them.
//!
//! One generator per client, created at start and never reset; the server never draws.

/// xorshift128 over four u32 words (SPEC §3.1).
///
/// The words are one array, read and written whole at each step (`[x, y, z, w]` becomes
/// `[y, z, w, next]`): in a loop of draws they stay in registers and the moves cost nothing.
/// Callers draw in runs with no library call in between (carsales draws a whole car before
/// writing it): when the state had to go to memory between single draws, the moves stalled on
/// store forwarding at every draw (measured: most of carsales' request building).
#[derive(Clone, Debug)]
pub struct FastRand {
    s: [u32; 4],
}

impl Default for FastRand {
    fn default() -> Self {
        Self::new()
    }
}

impl FastRand {
    /// A generator at the SPEC's seed.
    pub const fn new() -> Self {
        FastRand {
            s: [0x1d2a_cd47, 0x58ca_3e14, 0xf563_f232, 0x0bc7_6199],
        }
    }

    /// One step: `t = x ^ (x << 11); x = y; y = z; z = w; w = w ^ (w >> 19) ^ t ^ (t >> 8)`,
    /// all on u32 (shifts drop the high bits, as in C).
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        let [x, y, z, w] = self.s;
        let t = x ^ (x << 11);
        let next = w ^ (w >> 19) ^ t ^ (t >> 8);
        self.s = [y, z, w, next];
        next
    }

    /// `fastRand(n)`: `next() % n`. `n` is always a non-zero constant of the SPEC.
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        self.next_u32() % n
    }

    /// `fastRandDouble(r)`: `(double(next()) * r) / 4294967295.0`, in that order, so the
    /// rounding is the C++ suite's.
    #[inline]
    pub fn double(&mut self, r: f64) -> f64 {
        (f64::from(self.next_u32()) * r) / 4_294_967_295.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_outputs_are_the_specs() {
        let mut rng = FastRand::new();
        let got: Vec<u32> = (0..5).map(|_| rng.next_u32()).collect();
        assert_eq!(
            got,
            [
                0x40cc_d553,
                0x49ff_79c0,
                0xa3e7_e0af,
                0x931c_96e3,
                0xb55c_af9e
            ]
        );
    }

    #[test]
    fn below_and_double_use_the_next_output() {
        let mut a = FastRand::new();
        let mut b = FastRand::new();
        assert_eq!(a.below(200), b.next_u32() % 200);
        let raw = b.next_u32();
        assert_eq!(a.double(20.0), f64::from(raw) * 20.0 / 4_294_967_295.0);
    }
}
