use super::*;
use proptest::prelude::*;

#[test]
fn parses_the_issue_examples() {
    // 50 × 10⁹ B/s.
    assert_eq!(
        "50 GB/s".parse::<Bandwidth>().unwrap().bytes_per_s(),
        50_000_000_000
    );
    // 12.8 × 2³⁰ = 13,743,895,347.2 B/s, rounded to nearest.
    assert_eq!(
        "12.8 GiB/s".parse::<Bandwidth>().unwrap().bytes_per_s(),
        13_743_895_347
    );
    // 28.05 × 10⁹ bits/s ÷ 8 = 3,506,250,000 B/s.
    assert_eq!(
        "28.05 Gb/s".parse::<Bandwidth>().unwrap().bytes_per_s(),
        3_506_250_000
    );
    // 0.49 µs = 490,000 ps; 500 ns = 500,000 ps.
    assert_eq!("0.49 us".parse::<SimDuration>().unwrap().as_ps(), 490_000);
    assert_eq!("500ns".parse::<SimDuration>().unwrap().as_ps(), 500_000);
    assert_eq!("0.49 µs".parse::<SimTime>().unwrap().as_ps(), 490_000);
    assert_eq!(
        "1.05 GHz".parse::<Frequency>().unwrap().as_hz(),
        1_050_000_000
    );
    assert_eq!("4 KiB".parse::<Bytes>().unwrap().get(), 4096);
    assert_eq!("4096".parse::<Bytes>().unwrap().get(), 4096);
    assert_eq!(
        "1e9 B/s".parse::<Bandwidth>().unwrap().bytes_per_s(),
        1_000_000_000
    );
    assert_eq!(
        "275 TFLOP/s".parse::<FlopRate>().unwrap().0,
        275_000_000_000_000
    );
    assert_eq!("2 GFLOP".parse::<Flops>().unwrap().0, 2_000_000_000);
}

#[test]
fn displays_in_readable_exact_units() {
    assert_eq!(Bandwidth::from_gbps(50).unwrap().to_string(), "50 GB/s");
    assert_eq!(
        Bandwidth::from_bytes_per_s(6_800_000_000)
            .unwrap()
            .to_string(),
        "6.8 GB/s"
    );
    assert_eq!(SimDuration::from_ps(490_000).to_string(), "490 ns");
    assert_eq!(SimDuration::from_ps(1_500).to_string(), "1.5 ns");
    assert_eq!(Bytes(4096).to_string(), "4 KiB");
    assert_eq!(Bytes(1536).to_string(), "1.5 KiB");
    assert_eq!(Bytes(1000).to_string(), "1 kB");
    assert_eq!(Bytes(7).to_string(), "7 B");
    assert_eq!(
        Frequency::from_hz(1_050_000_000).unwrap().to_string(),
        "1.05 GHz"
    );
    assert_eq!(FlopRate(275_000_000_000_000).to_string(), "275 TFLOP/s");
}

#[test]
fn errors_quote_the_text() {
    for (text, fragment) in [
        ("-5 GB/s", "negative"),
        ("5 parsecs", "`parsecs` is not a unit"),
        ("GB/s", "number is missing"),
        ("0 GB/s", "zero"),
        ("1.2.3 GB/s", "malformed"),
        ("50", "unit is missing"),
    ] {
        let e = text.parse::<Bandwidth>().unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(&format!("`{text}`")), "{msg}");
        assert!(msg.contains(fragment), "{msg} lacks {fragment}");
    }
    let e = "0.5 ps".parse::<SimDuration>().unwrap_err().to_string();
    assert!(e.contains("whole number of ps"), "{e}");
    let e = "99999999 PB".parse::<Bytes>().unwrap_err().to_string();
    assert!(e.contains("too large"), "{e}");
    assert!("0 Hz".parse::<Frequency>().is_err());
    assert!("1.5 B".parse::<Bytes>().is_err());
}

#[test]
fn clock_domains_round_to_nearest_picosecond() {
    // 10¹² / 425e6 = 2352.94 ps -> 2353; 10¹² / 1.05e9 = 952.38 -> 952; 10¹² / 2e9 = 500.
    let c425 = ClockDomain::new("425 MHz".parse().unwrap());
    let c105 = ClockDomain::new("1.05 GHz".parse().unwrap());
    let c2 = ClockDomain::new("2 GHz".parse().unwrap());
    assert_eq!(c425.period().as_ps(), 2353);
    assert_eq!(c105.period().as_ps(), 952);
    assert_eq!(c2.period().as_ps(), 500);
    // Edge 3 at 1.05 GHz: 3 × 952.38 = 2857.14 -> 2857 ps (not 3 × 952 = 2856: no drift).
    assert_eq!(c105.span_of(Cycles(3)).as_ps(), 2857);
    // One million cycles at 1.05 GHz: 10¹⁸ / 1.05e9 = 952,380,952.38 -> 952,380,952 ps.
    assert_eq!(c105.span_of(Cycles(1_000_000)).as_ps(), 952_380_952);
    assert_eq!(c105.cycles_at(SimTime::from_ps(2857)), Cycles(3));
    assert_eq!(c105.cycles_at(SimTime::from_ps(2856)), Cycles(2));
    assert_eq!(c2.cycles_at(SimTime::from_ps(499)), Cycles(0));
    assert_eq!(c2.cycles_covering(SimDuration::from_ps(501)), Cycles(2));
    assert_eq!(c2.cycles_covering(SimDuration::from_ps(500)), Cycles(1));
}

#[test]
fn transfer_time_rounds_up() {
    // 4096 B at 50 GB/s = 81.92 ns = 81,920 ps exactly; 1 B at 3 B/s = 333,333,333,333.3 ps -> up.
    let bw = Bandwidth::from_gbps(50).unwrap();
    assert_eq!(bw.transfer_time(Bytes(4096)).as_ps(), 81_920);
    let slow = Bandwidth::from_bytes_per_s(3).unwrap();
    assert_eq!(slow.transfer_time(Bytes(1)).as_ps(), 333_333_333_334);
}

proptest! {
    #[test]
    fn time_round_trips(ps in any::<u64>()) {
        let t = SimTime::from_ps(ps);
        prop_assert_eq!(t.to_string().parse::<SimTime>().unwrap(), t);
        let d = SimDuration::from_ps(ps);
        prop_assert_eq!(d.to_string().parse::<SimDuration>().unwrap(), d);
    }

    #[test]
    fn bytes_round_trip(b in any::<u64>()) {
        prop_assert_eq!(Bytes(b).to_string().parse::<Bytes>().unwrap(), Bytes(b));
    }

    #[test]
    fn bandwidth_round_trips(b in 1..u64::MAX) {
        let bw = Bandwidth::from_bytes_per_s(b).unwrap();
        prop_assert_eq!(bw.to_string().parse::<Bandwidth>().unwrap(), bw);
    }

    #[test]
    fn frequency_round_trips(hz in 1..u64::MAX) {
        let f = Frequency::from_hz(hz).unwrap();
        prop_assert_eq!(f.to_string().parse::<Frequency>().unwrap(), f);
    }

    #[test]
    fn flops_round_trip(n in any::<u64>()) {
        prop_assert_eq!(Flops(n).to_string().parse::<Flops>().unwrap(), Flops(n));
        prop_assert_eq!(FlopRate(n).to_string().parse::<FlopRate>().unwrap(), FlopRate(n));
    }

    #[test]
    fn cycles_at_inverts_time_of(mhz in 1u64..5000, n in 0u64..1_000_000_000) {
        let c = ClockDomain::new(Frequency::from_mhz(mhz).unwrap());
        let t = c.time_of(Cycles(n));
        prop_assert_eq!(c.cycles_at(t), Cycles(n));
        // The edge lies within half a picosecond of n / f.
        let exact = n as f64 * 1e12 / (mhz as f64 * 1e6);
        prop_assert!((t.as_ps() as f64 - exact).abs() <= 0.5 + exact * 1e-12);
    }
}
