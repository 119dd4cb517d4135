use super::*;
use podsim_units::{SimDuration, SimTime};
use proptest::prelude::*;
use rand::RngCore;

/// Pushes and pops driven by `ops`; checks every pop against a sorted reference list.
fn check_against_reference(
    ops: &[(bool, u64, u8)],
    shift: u32,
    log2: u32,
) -> Result<(), TestCaseError> {
    let mut q = EventQueue::with_geometry(shift, log2);
    let mut reference: Vec<(u64, u8, u64)> = Vec::new(); // (time, priority, seq)
    let mut now = 0u64;
    for (seq, &(is_push, delay, prio)) in ops.iter().enumerate() {
        if is_push || reference.is_empty() {
            let t = now + delay;
            q.push(SimTime::from_ps(t), prio, seq as u64);
            reference.push((t, prio, seq as u64));
        } else {
            reference.sort();
            let want = reference.remove(0);
            let (t, ev) = q.pop().expect("queue has events");
            prop_assert_eq!((t.as_ps(), ev), (want.0, want.2));
            now = t.as_ps();
        }
        prop_assert_eq!(q.len(), reference.len());
    }
    reference.sort();
    for want in reference {
        let (t, ev) = q.pop().expect("queue has events");
        prop_assert_eq!((t.as_ps(), ev), (want.0, want.2));
    }
    prop_assert!(q.pop().is_none());
    Ok(())
}

proptest! {
    #[test]
    fn queue_pops_in_time_priority_sequence_order(
        ops in prop::collection::vec((any::<bool>(), prop_oneof![0u64..4, 0u64..5_000, 0u64..50_000_000], 0u8..3), 1..400),
        geometry in prop_oneof![Just((0u32, 6u32)), Just((4, 6)), Just((10, 12)), Just((2, 7))],
    ) {
        check_against_reference(&ops, geometry.0, geometry.1)?;
    }
}

#[test]
fn equal_keys_keep_insertion_order() {
    let mut q = EventQueue::new();
    for i in 0..10 {
        q.push(SimTime::from_ps(1000), 5, i);
    }
    q.push(SimTime::from_ps(1000), 4, 99);
    let got: Vec<_> = std::iter::from_fn(|| q.pop().map(|x| x.1)).collect();
    assert_eq!(got, vec![99, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
}

#[test]
fn far_future_events_come_back_from_overflow() {
    let mut q = EventQueue::with_geometry(0, 6); // 64 ps horizon
    q.push(SimTime::from_ps(1_000_000), 0, 'c');
    q.push(SimTime::from_ps(10), 0, 'a');
    q.push(SimTime::from_ps(500), 0, 'b');
    assert_eq!(q.peek_time(), Some(SimTime::from_ps(10)));
    let got: Vec<_> = std::iter::from_fn(|| q.pop())
        .map(|(t, e)| (t.as_ps(), e))
        .collect();
    assert_eq!(got, vec![(10, 'a'), (500, 'b'), (1_000_000, 'c')]);
}

#[test]
fn a_deadlock_names_its_cycle() {
    let e = SimError::Deadlock {
        at: SimTime::from_ns(1),
        waiting: vec!["a".into(), "b".into()],
    };
    assert_eq!(
        e.to_string(),
        "deadlock at 1 ns: 2 waiting in a cycle: a -> b"
    );
}

/// xoshiro256++ and SplitMix64 written from the authors' reference C code (Blackman and Vigna),
/// independently of `rand_xoshiro`, to pin the generator.
fn reference_xoshiro(seed: u64, n: usize) -> Vec<u64> {
    let mut sm = seed;
    let mut next_sm = || {
        sm = sm.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = sm;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    };
    let mut s = [next_sm(), next_sm(), next_sm(), next_sm()];
    (0..n)
        .map(|_| {
            let r = (s[0].wrapping_add(s[3])).rotate_left(23).wrapping_add(s[0]);
            let t = s[1] << 17;
            s[2] ^= s[0];
            s[3] ^= s[1];
            s[1] ^= s[2];
            s[0] ^= s[3];
            s[2] ^= t;
            s[3] = s[3].rotate_left(45);
            r
        })
        .collect()
}

#[test]
fn streams_are_pinned_and_independent() {
    let streams = RngStreams::new(42);
    let mut a = streams.stream("net.router.0");
    let got: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
    assert_eq!(got, reference_xoshiro(streams.seed_for("net.router.0"), 8));
    // FNV-1a of "a" is 0xaf63dc4c8601ec8c (the published test vector).
    assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    let mut b = streams.stream("net.router.1");
    assert_ne!(got[0], b.next_u64());
    let mut again = RngStreams::new(42).stream("net.router.0");
    assert_eq!(again.next_u64(), got[0]);
    assert_ne!(
        RngStreams::new(43).seed_for("net.router.0"),
        streams.seed_for("net.router.0")
    );
}

#[test]
fn histogram_percentiles_by_nearest_rank() {
    let mut h = Histogram::new();
    for v in 1..=100 {
        h.record(v);
    }
    // Nearest rank: p50 is the 50th smallest = 50, p99 the 99th = 99.
    assert_eq!(h.percentile(0.5), 50);
    assert_eq!(h.percentile(0.99), 99);
    assert_eq!(h.max(), 100);
    assert_eq!(h.min(), 1);
    assert!((h.mean() - 50.5).abs() < 1e-12);
    // A large value lands in a bucket within 1/128 below it.
    let mut big = Histogram::new();
    big.record(1_000_003);
    big.record(2_000_000);
    let p = big.percentile(0.5);
    assert!(
        p <= 1_000_003 && p as f64 >= 1_000_003.0 * (1.0 - 1.0 / 128.0),
        "{p}"
    );
}

/// Nodes that each send tokens to random peers after random delays, drawing from their own
/// streams, on the event queue; the trace is the whole observable behaviour.
fn gossip(seed: u64) -> Vec<(u64, usize)> {
    let streams = RngStreams::new(seed);
    let mut rngs: Vec<SimRng> = (0..8)
        .map(|i| streams.stream(&format!("node.{i}")))
        .collect();
    let mut q = EventQueue::new();
    for i in 0..8 {
        q.push(SimTime::ZERO, 128, i);
    }
    let (mut trace, mut left) = (Vec::new(), 2000u32);
    while let Some((now, node)) = q.pop() {
        trace.push((now.as_ps(), node));
        if left == 0 {
            continue;
        }
        left -= 1;
        let r = &mut rngs[node];
        let to = (r.next_u64() % 8) as usize;
        let delay = SimDuration::from_ps(r.next_u64() % 4 * 1000); // many ties on purpose
        q.push(now + delay, 128, to);
    }
    trace
}

#[test]
fn same_seed_same_trace() {
    let a = gossip(11);
    assert_eq!(a.len(), 2008);
    assert_eq!(a, gossip(11));
    assert_ne!(a, gossip(12));
    // Time never runs backwards.
    assert!(a.windows(2).all(|w| w[0].0 <= w[1].0));
}
