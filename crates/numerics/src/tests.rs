use super::*;
use proptest::prelude::*;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const CODES: &str = include_str!("../tests/golden/codes.txt");
const CONVERT: &str = include_str!("../tests/golden/convert.txt");

fn rne(f: Format, x: f32) -> u32 {
    f.encode_f32(x, Rounding::NearestEven, false).unwrap()
}

fn hex(s: &str) -> u32 {
    u32::from_str_radix(s, 16).unwrap()
}

#[test]
fn every_8_bit_code_decodes_as_ml_dtypes_does() {
    let mut seen = 0;
    for line in CODES.lines().filter(|l| !l.starts_with('#')) {
        let v: Vec<&str> = line.split_whitespace().collect();
        let f = Format::parse(v[0]).unwrap();
        let (code, want) = (hex(v[1]), f32::from_bits(hex(v[2])));
        let got = f.decode(code);
        if want.is_nan() {
            assert!(got.is_nan(), "{f} {code:#x}");
            assert_eq!(got.is_sign_negative(), want.is_sign_negative());
        } else {
            assert_eq!((got as f32).to_bits(), want.to_bits(), "{f} {code:#x}");
            assert_eq!(got, f64::from(want), "decoding is exact");
        }
        seen += 1;
    }
    assert_eq!(seen, 512);
}

#[test]
fn float32_conversions_match_ml_dtypes_bit_for_bit() {
    let formats = [Format::BF16, Format::FP16, Format::E4M3, Format::E5M2];
    let mut seen = 0;
    for line in CONVERT.lines().filter(|l| !l.starts_with('#')) {
        let v: Vec<&str> = line.split_whitespace().collect();
        let x = f32::from_bits(hex(v[0]));
        for (f, want) in formats.iter().zip(&v[1..]) {
            assert_eq!(rne(*f, x), hex(want), "{f}: {x:e} ({:#010x})", x.to_bits());
        }
        seen += 1;
    }
    assert!(seen > 4000, "{seen} vectors");
}

#[test]
fn named_limits() {
    // OCP FP8: E4M3 max 1.75 x 2^8 = 448, E5M2 max 1.75 x 2^15 = 57344; FP16 65504;
    // BF16 (2 - 2^-7) x 2^127.
    assert_eq!(Format::E4M3.max_value(), 448.0);
    assert_eq!(Format::E5M2.max_value(), 57344.0);
    assert_eq!(Format::FP16.max_value(), 65504.0);
    assert_eq!(
        Format::BF16.max_value(),
        (2.0 - 2f64.powi(-7)) * 2f64.powi(127)
    );
    assert_eq!(Format::E4M3.min_positive(), 2f64.powi(-9));
    assert_eq!(Format::FP16.min_positive(), 2f64.powi(-24));
}

#[test]
fn saturation_clamps_to_the_largest_finite_value() {
    let sat = |f: Format, x: f32| f.encode_f32(x, Rounding::NearestEven, true).unwrap();
    assert_eq!(sat(Format::E4M3, 1e6), 0x7e); // 448
    assert_eq!(sat(Format::E4M3, -500.0), 0xfe); // -448
    assert_eq!(sat(Format::E5M2, f32::INFINITY), 0x7b); // 57344
    assert_eq!(sat(Format::FP16, 1e9), 0x7bff); // 65504
    assert_eq!(sat(Format::BF16, f32::NEG_INFINITY), 0xff7f);
    // NaN stays NaN.
    assert!(Format::E4M3.is_nan(sat(Format::E4M3, f32::NAN)));
    // Without saturation: NaN for E4M3, infinity for the IEEE-like formats (as ml_dtypes).
    assert_eq!(rne(Format::E4M3, 1e6), 0x7f);
    assert_eq!(rne(Format::E5M2, 1e6), 0x7c);
}

#[test]
fn cfp_formats_by_hand() {
    let e4b7 = Format::cfp8(4, 7).unwrap();
    // Same layout as E4M3 but every code is a number: 0x7f is 1.875 x 2^(15-7) = 480, not NaN.
    assert_eq!(e4b7.decode(0x7f), 480.0);
    assert_eq!(e4b7.max_value(), 480.0);
    // Every other code agrees with E4M3.
    for c in (0..256).filter(|c| c & 0x7f != 0x7f) {
        assert_eq!(e4b7.decode(c), Format::E4M3.decode(c), "{c:#x}");
    }
    // cfp8:e5:bias=15: max code 0x7f = 1.75 x 2^(31-15) = 114688 (E5M2 would be NaN there).
    let e5b15 = Format::cfp8(5, 15).unwrap();
    assert_eq!(e5b15.max_value(), 114_688.0);
    // cfp8:e4:bias=0: max 1.875 x 2^15 = 61440; smallest 2^(1-0-3) = 0.25.
    let e4b0 = Format::cfp8(4, 0).unwrap();
    assert_eq!(e4b0.max_value(), 61_440.0);
    assert_eq!(e4b0.min_positive(), 0.25);
    // cfp8:e4:bias=63: smallest 2^(1-63-3) = 2^-65.
    assert_eq!(Format::cfp8(4, 63).unwrap().min_positive(), 2f64.powi(-65));
    // cfp8:e5:bias=20, 1.0: exponent field 20 = 0b10100, mantissa 0 -> 0b0_10100_00 = 0x50.
    let e5b20 = Format::cfp8(5, 20).unwrap();
    assert_eq!(e5b20.encode(1.0, Rounding::NearestEven, false), Ok(0x50));
    // 1.3 lies between 1.25 (0x51) and 1.5 (0x52), nearer 1.25.
    assert_eq!(e5b20.encode(1.3, Rounding::NearestEven, false), Ok(0x51));
    // 1.375 is the midpoint: ties to the even mantissa, 1.5 (mantissa 0b10).
    assert_eq!(e5b20.encode(1.375, Rounding::NearestEven, false), Ok(0x52));
    // CFP16 (1-6-9), bias 31: 1.0 = 0b0_011111_000000000 = 0x3e00; max (2 - 2^-9) x 2^32;
    // smallest 2^(1-31-9) = 2^-39; 1 + 2^-9 is the next code, 0x3e01.
    let c16 = Format::cfp16(31).unwrap();
    assert_eq!(c16.encode(1.0, Rounding::NearestEven, false), Ok(0x3e00));
    assert_eq!(c16.decode(0x3e01), 1.0 + 2f64.powi(-9));
    assert_eq!(c16.max_value(), (2.0 - 2f64.powi(-9)) * 2f64.powi(32));
    assert_eq!(c16.min_positive(), 2f64.powi(-39));
    // No infinities: overflow saturates even without --saturate; NaN has no code.
    assert_eq!(e4b7.encode(1e9, Rounding::NearestEven, false), Ok(0x7f));
    assert_eq!(
        e4b7.encode(f64::NAN, Rounding::NearestEven, false),
        Err(NumericsError::NoNan(e4b7))
    );
    assert!(Format::cfp8(6, 7).is_err());
    assert!(Format::cfp16(64).is_err());
}

#[test]
fn cfp8_over_all_biases_spans_more_than_fp16() {
    // DOJO paper, "DOJO Arithmetic Formats": "Between all possible bias values, CFP8 has a
    // larger representation range than regular IEEE FP16." FP16 spans 2^-24 .. 65504; CFP8
    // reaches down to 2^(1-63-3) = 2^-65 (e4, bias 63) and up to 1.75 x 2^(31-0) (e5, bias 0).
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for exp in [4, 5] {
        for bias in 0..=63 {
            let f = Format::cfp8(exp, bias).unwrap();
            lo = lo.min(f.min_positive());
            hi = hi.max(f.max_value());
        }
    }
    assert_eq!(lo, 2f64.powi(-65));
    assert_eq!(hi, 1.75 * 2f64.powi(31));
    assert!(lo < Format::FP16.min_positive() && hi > Format::FP16.max_value());
    // And CFP16 reaches at least CFP8's range.
    let c16_lo = Format::cfp16(63).unwrap().min_positive();
    let c16_hi = Format::cfp16(0).unwrap().max_value();
    assert!(c16_lo <= lo && c16_hi >= hi);
}

#[test]
fn every_code_round_trips() {
    let mut formats = vec![Format::BF16, Format::FP16, Format::E4M3, Format::E5M2];
    for bias in [0, 7, 15, 31, 63] {
        formats.push(Format::cfp8(4, bias).unwrap());
        formats.push(Format::cfp8(5, bias).unwrap());
        formats.push(Format::cfp16(bias).unwrap());
    }
    for f in formats {
        for code in 0..(1u32 << f.bits()) {
            let v = f.decode(code);
            if v.is_nan() {
                continue;
            }
            assert_eq!(
                f.encode(v, Rounding::NearestEven, false),
                Ok(code),
                "{f} {code:#x}"
            );
        }
    }
}

#[test]
fn stochastic_rounding_is_unbiased_and_seeded() {
    // x = 1 + 0.3 ulp in BF16 (ulp 2^-7 at 1.0): rounds up with probability 0.3. Over
    // n = 200,000 draws the mean of the results has standard deviation
    // ulp x sqrt(0.3 x 0.7 / n) = 0.00781 x 0.001025 = 8.0e-6; accept 5 sigma.
    let ulp = 2f64.powi(-7);
    for (f, x, ulp) in [
        (Format::BF16, 1.0 + 0.3 * ulp, ulp),
        (Format::E4M3, 10.0 + 0.7 * 1.0, 1.0), // spacing 1 in [8, 16)
        (Format::E5M2, -(0.1 * 2f64.powi(-16)), 2f64.powi(-16)), // among subnormals
    ] {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let n = 200_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let c = f.encode(x, Rounding::Stochastic(&mut rng), false).unwrap();
            sum += f.decode(c);
        }
        let mean = sum / f64::from(n);
        let p = (x.abs() / ulp).fract();
        let sigma = ulp * (p * (1.0 - p) / f64::from(n)).sqrt();
        assert!(
            (mean - x).abs() < 5.0 * sigma,
            "{f}: mean {mean} vs {x} (sigma {sigma})"
        );
    }
    // Exact values never move; the same seed gives the same codes.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    for _ in 0..100 {
        assert_eq!(
            Format::BF16.encode(1.5, Rounding::Stochastic(&mut rng), false),
            Ok(0x3fc0)
        );
    }
    let draw = |seed| {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..64)
            .map(|i| {
                Format::E4M3
                    .encode(
                        1.0 + f64::from(i) / 97.0,
                        Rounding::Stochastic(&mut rng),
                        false,
                    )
                    .unwrap()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(draw(3), draw(3));
    assert_ne!(draw(3), draw(4));
}

#[test]
fn integers_wrap_around() {
    assert_eq!(Int::I8.wrap(200), -56);
    assert_eq!(Int::I8.wrap(-129), 127);
    assert_eq!(Int::I32.wrap(1 << 31), -(1 << 31));
    assert_eq!(Int::I16.wrap(-32768 - 1), 32767);
    assert_eq!((Int::I8.min(), Int::I8.max()), (-128, 127));
    assert!(Int::I8.holds(-128) && !Int::I8.holds(128));
    assert_eq!(
        Int::new(64).unwrap().wrap(i128::from(i64::MAX) + 1),
        i64::MIN
    );
    assert!(Int::new(0).is_none());
}

#[test]
fn format_names() {
    for n in [
        "fp32",
        "bf16",
        "fp16",
        "e4m3",
        "e5m2",
        "cfp8:e4:bias=7",
        "cfp8:e5:bias=20",
        "cfp16:bias=31",
    ] {
        assert_eq!(Format::parse(n).unwrap().to_string(), n);
    }
    let e = Format::parse("cfp8:e4").unwrap_err().to_string();
    assert!(e.contains("cfp8:e4") && e.contains("bias"), "{e}");
    assert!(Format::parse("fp8").is_err());
    assert!(Format::parse("cfp8:e4:bias=x").is_err());
}

proptest! {
    // Rust's `as f32` rounds to nearest, ties to even, and overflows to infinity: an
    // independent reference for FP32 conversion of any f64.
    #[test]
    fn fp32_matches_rust_casts(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        prop_assume!(!x.is_nan());
        let got = Format::FP32.encode(x, Rounding::NearestEven, false).unwrap();
        prop_assert_eq!(got, (x as f32).to_bits());
    }

    // Stochastic rounding lands on one of the two neighbours.
    #[test]
    fn stochastic_picks_a_neighbour(x in -500.0f64..500.0, seed in any::<u64>()) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let f = Format::E5M2;
        let v = f.decode(f.encode(x, Rounding::Stochastic(&mut rng), false).unwrap());
        let n = f.decode(f.encode(x, Rounding::NearestEven, false).unwrap());
        // Both neighbours are within one spacing (at most 2^(floor(log2 |x|) - 2)).
        let spacing = 2f64.powi((x.abs().max(2f64.powi(-14))).log2().floor() as i32 - 2);
        prop_assert!((v - x).abs() <= spacing && (n - x).abs() <= spacing / 2.0);
    }
}
