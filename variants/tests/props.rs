//! Property tests: every implementation equals the reference bit for bit on random series built
//! from noisy stretches, flat runs, repeated tick-grid prices and NaN runs, with random windows.

mod common;

use proptest::prelude::*;

use common::series::{case, series};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_implementation_matches_the_reference((close, params, fee) in case()) {
        common::assert_all_identical("proptest", &close, &params, fee);
    }

    /// Combos with hma3 windows equal to hma's, so the shared-pass path runs on random data too.
    #[test]
    fn shared_passes_match_the_reference(close in series(), l in 1i64..60) {
        let params = [hullsweep_kernel::derive_windows(l), hullsweep_kernel::derive_windows(l / 2 + 1)];
        common::assert_all_identical("proptest-derived", &close, &params, 0.09);
    }
}
