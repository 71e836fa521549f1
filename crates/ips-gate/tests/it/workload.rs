//! Part i of the shared workload: the reference's counts reproduced exactly.

use ips_gate::assess_randomness;
use maxim_core::PatternType;
use maxim_testkit::randomness_series as series;

#[test]
fn counts_match_the_reference() {
    let all = series();
    assert_eq!(all[0][..3], [0.682_362_734_978_995_8, 0.750_694_892_958_278_7, 0.265_322_440_599_183_3]);
    let (mut random, mut trending, mut cyclic, mut clustering) = (0, 0, 0, 0);
    for s in &all {
        let a = assess_randomness(s).unwrap();
        if a.is_random {
            random += 1;
        }
        match a.pattern_type {
            PatternType::Trending => trending += 1,
            PatternType::Cyclic => cyclic += 1,
            PatternType::Clustering => clustering += 1,
            PatternType::Random => {}
            PatternType::InsufficientData => panic!("100 values are enough"),
        }
    }
    assert_eq!(random, 3614);
    assert_eq!((clustering, cyclic, trending), (246, 121, 6019));
}
