//! Synthetic traffic and the measurement protocol: Bernoulli injection of a pattern, warm-up
//! until the network settles, a measurement window, a drain, and the statistics.

use rand::RngCore;
use rayon::prelude::*;

use podsim_engine::{Histogram, RngStreams};
use podsim_topology::Network;

use crate::NocError;
use crate::config::{ConfigError, RouterConfig, RouterMode};
use crate::fabric::{Fabric, Found, NocRouting};
use crate::lean::Lean;
use crate::sim::{Delivered, LinkStat, Noc};
use crate::spec::{
    Destinations, MIN_DRAIN_CYCLES, MIN_WINDOW_CYCLES, NocResult, PacketLog, Pattern, RunSpec,
    SATURATION_RATIO, announce,
};
use podsim_engine::SimError;

const MAX_WARMUP_SAMPLES: u64 = 20;

fn rel_change(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / a.abs().max(b.abs())
    }
}

/// Run `spec` on `net`.
///
/// Phases, as BookSim runs them: warm-up samples of `sample_cycles` until average latency and
/// accepted throughput each change by less than 5% from one sample to the next (at most 20
/// samples); a window of `cycles` in which created packets are measured; then a drain, with
/// traffic still offered, until every measured packet has arrived. The run is saturated if the
/// window's accepted load is below [`SATURATION_RATIO`] of the generated load, or if the drain
/// has not finished after another `cycles` cycles (then the latency figures cover only the
/// measured packets that arrived, and understate the truth).
pub fn run(
    net: &Network,
    routing: NocRouting,
    cfg: &RouterConfig,
    spec: &RunSpec,
) -> Result<NocResult, NocError> {
    run_logged(net, routing, cfg, spec, None)
}

/// As [`run`], recording every delivered packet into `log` when one is given.
pub fn run_logged(
    net: &Network,
    routing: NocRouting,
    cfg: &RouterConfig,
    spec: &RunSpec,
    log: Option<&mut PacketLog>,
) -> Result<NocResult, NocError> {
    if cfg.router == RouterMode::Booksim {
        return crate::booksim::run(net, routing, cfg, spec, log);
    }
    // Memory, before anything is built: a cached route for every pair the traffic can meet (at
    // most one per packet created, over the longest warm-up, the window and the drain;
    // permutation patterns meet one pair per source), then the routers within what is left.
    let flits = cfg.packet_flits;
    let p = spec.rate / f64::from(flits);
    let mut cfg = cfg.clone();
    let mut routes = (0, 0);
    if cfg.memory_limit < u64::MAX {
        let e = net.endpoints();
        let most_cycles = (MAX_WARMUP_SAMPLES * spec.sample_cycles)
            .saturating_add(spec.cycles)
            .saturating_add(spec.cycles.max(MIN_DRAIN_CYCLES));
        let packets = (p.clamp(0.0, 1.0) * e as f64 * most_cycles as f64).ceil() as u64;
        let pairs = match spec.pattern {
            Pattern::Uniform | Pattern::Hotspot { .. } | Pattern::AllToAll => {
                packets.min(e.saturating_mul(e))
            }
            _ => e,
        };
        let bytes = crate::Fabric::route_bytes(pairs, net.metrics().average_distance + 2.0);
        if bytes > cfg.memory_limit {
            return Err(NocError::Memory {
                what: format!("the routes of {pairs} source-destination pairs on {e} endpoints"),
                estimate: bytes,
                limit: cfg.memory_limit,
            });
        }
        cfg.memory_limit -= bytes;
        routes = (pairs, bytes);
    }
    let build = || {
        Noc::new(net, routing, &cfg).map_err(|e| match e {
            NocError::Memory {
                what,
                estimate,
                limit,
            } => NocError::Memory {
                what: format!("{what}, and the routes of {} pairs", routes.0),
                estimate: estimate.saturating_add(routes.1),
                limit: limit.saturating_add(routes.1),
            },
            other => other,
        })
    };
    let noc = build()?;
    if !(spec.rate > 0.0 && p <= 1.0) {
        return Err(ConfigError::new(
            "rate",
            format!(
                "expected a load above 0 and at most one packet per cycle ({flits} flits per \
                 endpoint per cycle), got {}",
                spec.rate
            ),
        )
        .into());
    }
    if spec.cycles < MIN_WINDOW_CYCLES || spec.sample_cycles == 0 {
        return Err(ConfigError::new(
            "cycles",
            format!(
                "a measurement window of {} cycles cannot tell a latency or saturation; \
                 expected at least {MIN_WINDOW_CYCLES}",
                spec.cycles
            ),
        )
        .into());
    }
    announce(net, spec);
    // The fast engine where the configuration allows and no packet log is kept; a run it
    // finds stuck runs again on the general engine, which names the cycle of waits.
    if log.is_none() {
        match Lean::from_noc(noc, cfg.memory_limit) {
            Ok(mut lean) => match on_pool(lean.parts() > 1, || {
                drive(&mut lean, net, spec, flits, None)
            }) {
                Err(NocError::Sim(SimError::Deadlock { .. })) => {}
                other => return other,
            },
            Err(mut noc) => return drive(&mut *noc, net, spec, flits, None),
        }
        return drive(&mut build()?, net, spec, flits, None);
    }
    drive(&mut { noc }, net, spec, flits, log)
}

/// `run()`, on one of the thread pool's threads where `pooled` (the fast engine in parts:
/// each cycle the thread running it takes a part and the pool's others the rest, rather than
/// this thread waiting for the pool's threads to wake for all of them), else here.
fn on_pool<T: Send>(pooled: bool, run: impl FnOnce() -> T + Send) -> T {
    if !pooled || rayon::current_thread_index().is_some() {
        return run();
    }
    // Called from outside the pool, the scope runs `run` on one of the pool's threads; each
    // of the others (as many as there are cores to run them) keeps looking for the parts'
    // work until the run ends, rather than falling asleep between two cycles and being woken
    // for each (tens of microseconds a cycle).
    let stop = std::sync::atomic::AtomicBool::new(false);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let keepers = rayon::current_num_threads().min(cores).saturating_sub(1);
    rayon::scope(|s| {
        for _ in 0..keepers {
            s.spawn(|_| keep_looking(&stop));
        }
        // The keepers stop however `run` ends (a panic too, or the scope would wait forever).
        let _stop = StopOnDrop(&stop);
        run()
    })
}

/// Sets its flag when dropped.
struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Release);
    }
}

/// Run the pool's pending work until `stop` is set: spinning at first when there is none,
/// then yielding the core to other threads between looks, but never sleeping.
fn keep_looking(stop: &std::sync::atomic::AtomicBool) {
    let mut idle = 0u32;
    while !stop.load(std::sync::atomic::Ordering::Acquire) {
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            idle = 0;
        } else if idle < 1 << 12 {
            idle += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// What [`drive`] needs of a packet-level engine: [`Noc`] and [`Lean`] decide alike.
trait Engine {
    fn endpoints(&self) -> usize;
    /// Inject a packet, with its route where it was found ahead (`found`, on the fabric
    /// [`Engine::finds_ahead`] gives).
    fn inject(
        &mut self,
        src: usize,
        dst: usize,
        flits: u32,
        tag: u64,
        found: Option<&Found>,
    ) -> Result<(), NocError>;
    /// The fabric whose routes the next cycle's packets may be found ahead on, if the engine
    /// takes them.
    fn finds_ahead(&self) -> Option<&Fabric> {
        None
    }
    /// One cycle, `beside` run once during it (given [`Engine::finds_ahead`]'s fabric).
    fn step(&mut self, beside: &mut (dyn FnMut(Option<&Fabric>) + Send)) -> Result<(), NocError>;
    fn ejected(&self) -> u64;
    fn take_delivered(&mut self, out: &mut Vec<Delivered>);
    fn now(&self) -> u64;
    fn reset_link_stats(&mut self);
    fn link_stats(&self) -> Vec<LinkStat>;
    fn flit_hops(&self) -> u64;
    fn cycle_ps(&self) -> u64;
}

impl Engine for Noc {
    fn endpoints(&self) -> usize {
        self.fabric().endpoints()
    }
    fn inject(
        &mut self,
        src: usize,
        dst: usize,
        flits: u32,
        tag: u64,
        _found: Option<&Found>,
    ) -> Result<(), NocError> {
        Noc::inject(self, src, dst, flits, tag)
    }
    fn step(&mut self, beside: &mut (dyn FnMut(Option<&Fabric>) + Send)) -> Result<(), NocError> {
        beside(None);
        Ok(Noc::step(self)?)
    }
    fn ejected(&self) -> u64 {
        self.audit().ejected
    }
    fn take_delivered(&mut self, out: &mut Vec<Delivered>) {
        Noc::take_delivered(self, out);
    }
    fn now(&self) -> u64 {
        Noc::now(self)
    }
    fn reset_link_stats(&mut self) {
        Noc::reset_link_stats(self);
    }
    fn link_stats(&self) -> Vec<LinkStat> {
        Noc::link_stats(self)
    }
    fn flit_hops(&self) -> u64 {
        Noc::flit_hops(self)
    }
    fn cycle_ps(&self) -> u64 {
        self.fabric().cycle().as_ps()
    }
}

impl Engine for Lean {
    fn endpoints(&self) -> usize {
        self.fabric().endpoints()
    }
    fn inject(
        &mut self,
        src: usize,
        dst: usize,
        flits: u32,
        tag: u64,
        found: Option<&Found>,
    ) -> Result<(), NocError> {
        Lean::inject(self, src, dst, flits, tag, found)
    }
    fn finds_ahead(&self) -> Option<&Fabric> {
        Some(self.fabric())
    }
    fn step(&mut self, beside: &mut (dyn FnMut(Option<&Fabric>) + Send)) -> Result<(), NocError> {
        // The general engine, run again, reports the deadlock with its cycle of waits.
        Lean::step(self, &mut |f: &Fabric| beside(Some(f))).map_err(|_| {
            NocError::Sim(SimError::Deadlock {
                at: podsim_units::SimTime::ZERO,
                waiting: Vec::new(),
            })
        })
    }
    fn ejected(&self) -> u64 {
        self.audit().ejected
    }
    fn take_delivered(&mut self, out: &mut Vec<Delivered>) {
        Lean::take_delivered(self, out);
    }
    fn now(&self) -> u64 {
        Lean::now(self)
    }
    fn reset_link_stats(&mut self) {
        Lean::reset_link_stats(self);
    }
    fn link_stats(&self) -> Vec<LinkStat> {
        Lean::link_stats(self)
    }
    fn flit_hops(&self) -> u64 {
        Lean::flit_hops(self)
    }
    fn cycle_ps(&self) -> u64 {
        self.fabric().cycle().as_ps()
    }
}

/// A cycle's packets, drawn ahead: their (source, destination) pairs in order and, where the
/// engine finds routes ahead, each one's route.
#[derive(Default)]
struct Ahead {
    pairs: Vec<(u32, u32)>,
    found: Vec<Option<Found>>,
}

/// Run `spec`'s traffic on `noc` (built idle, for `net`): warm-up, measurement window, drain.
fn drive<E: Engine>(
    noc: &mut E,
    net: &Network,
    spec: &RunSpec,
    flits: u32,
    mut log: Option<&mut PacketLog>,
) -> Result<NocResult, NocError> {
    let e = noc.endpoints();
    let p = spec.rate / f64::from(flits);
    let mut dests = Destinations::new(&spec.pattern, net, e)?;
    let mut rng = RngStreams::new(spec.seed).stream("noc.traffic");
    // A packet starts when a 64-bit draw falls below p x 2^64 (p = 1: always).
    let threshold = if p >= 1.0 {
        u64::MAX
    } else {
        (p * 18_446_744_073_709_551_616.0) as u64
    };
    let mut generated = 0u64;
    // A cycle's packets (source, destination) are drawn a cycle ahead, in the same order as
    // drawing them in their own cycle would, during the cycle before (beside the routers,
    // where they step on several threads), with their routes (cached, or the paths of those
    // not yet cached); the next cycle injects them.
    let mut draw = |f: Option<&Fabric>, next: &mut Ahead| {
        next.pairs.clear();
        next.found.clear();
        for src in 0..e {
            let draw = rng.next_u64();
            if draw < threshold || threshold == u64::MAX {
                let dst = dests.next(src, &mut rng);
                next.pairs.push((src as u32, dst as u32));
            }
        }
        if let Some(f) = f {
            next.found
                .extend(next.pairs.iter().map(|&(s, d)| Some(f.find(s, d))));
        }
    };
    let mut next = Ahead::default();
    let mut now = Ahead::default();
    draw(noc.finds_ahead(), &mut next);
    let mut tick = |noc: &mut E, measured: bool, generated: &mut u64| -> Result<(), NocError> {
        std::mem::swap(&mut now, &mut next);
        for (k, &(src, dst)) in now.pairs.iter().enumerate() {
            // Read, not taken: what it holds is dropped when the next cycle's are drawn,
            // beside the routers.
            let found = now.found.get(k).and_then(Option::as_ref);
            noc.inject(
                src as usize,
                dst as usize,
                flits,
                u64::from(measured),
                found,
            )?;
            *generated += u64::from(flits);
        }
        noc.step(&mut |f| draw(f, &mut next))?;
        Ok(())
    };
    let mut got: Vec<Delivered> = Vec::new();
    // Warm-up.
    let mut prev: Option<(f64, f64)> = None;
    for _ in 0..MAX_WARMUP_SAMPLES {
        let before = noc.ejected();
        let (mut sum, mut count) = (0u64, 0u64);
        for _ in 0..spec.sample_cycles {
            tick(noc, false, &mut generated)?;
            got.clear();
            noc.take_delivered(&mut got);
            if let Some(l) = log.as_deref_mut() {
                l.record(&got);
            }
            for d in &got {
                sum += d.latency();
                count += 1;
            }
        }
        let lat = if count > 0 {
            sum as f64 / count as f64
        } else {
            0.0
        };
        let thr = (noc.ejected() - before) as f64;
        if let Some((pl, pt)) = prev
            && rel_change(lat, pl) < 0.05
            && rel_change(thr, pt) < 0.05
        {
            break;
        }
        prev = Some((lat, thr));
    }
    let warmup = noc.now();
    // Measurement window.
    noc.reset_link_stats();
    let before = noc.ejected();
    generated = 0;
    let mut hist = Histogram::new();
    let (mut queueing, mut hops, mut measured_live) = (0u64, 0u64, 0u64);
    let mut record = |d: &Delivered, hist: &mut Histogram, live: &mut u64| {
        if d.tag == 1 {
            hist.record(d.latency());
            queueing += d.queueing();
            hops += u64::from(d.hops);
            *live -= 1;
        }
    };
    for _ in 0..spec.cycles {
        let g0 = generated;
        tick(noc, true, &mut generated)?;
        measured_live += (generated - g0) / u64::from(flits);
        got.clear();
        noc.take_delivered(&mut got);
        if let Some(l) = log.as_deref_mut() {
            l.record(&got);
        }
        for d in &got {
            record(d, &mut hist, &mut measured_live);
        }
    }
    let window = noc.now() - warmup;
    let accepted = (noc.ejected() - before) as f64 / (e as u64 * window) as f64;
    let generated_rate = generated as f64 / (e as u64 * window) as f64;
    let links = noc
        .link_stats()
        .into_iter()
        .filter(|l| l.kind == crate::ChannelKind::Link)
        .collect();
    // Drain: keep the load on until every measured packet is out.
    let mut drained = measured_live == 0;
    let mut unused = 0;
    for _ in 0..spec.cycles.max(MIN_DRAIN_CYCLES) {
        if drained {
            break;
        }
        tick(noc, false, &mut unused)?;
        got.clear();
        noc.take_delivered(&mut got);
        if let Some(l) = log.as_deref_mut() {
            l.record(&got);
        }
        for d in &got {
            record(d, &mut hist, &mut measured_live);
        }
        drained = measured_live == 0;
    }
    let n = hist.count();
    if n == 0 {
        return Err(ConfigError::new(
            "rate",
            format!(
                "no packet was created in the {}-cycle window at {} flits/node/cycle, so there \
                 is nothing to measure; raise the rate or the cycles",
                spec.cycles, spec.rate
            ),
        )
        .into());
    }
    let mean = hist.mean();
    let avg = |x: u64| if n > 0 { x as f64 / n as f64 } else { 0.0 };
    Ok(NocResult {
        offered_flits_per_node_cycle: spec.rate,
        generated_flits_per_node_cycle: generated_rate,
        accepted_flits_per_node_cycle: accepted,
        average_latency_cycles: mean,
        p50_latency_cycles: if n > 0 { hist.percentile(0.5) } else { 0 },
        p99_latency_cycles: if n > 0 { hist.percentile(0.99) } else { 0 },
        max_latency_cycles: if n > 0 { hist.max() } else { 0 },
        average_queueing_cycles: avg(queueing),
        average_network_cycles: mean - avg(queueing),
        average_hops: avg(hops),
        saturated: !drained || accepted < SATURATION_RATIO * generated_rate,
        measured_packets: n,
        warmup_cycles: warmup,
        simulated_cycles: noc.now(),
        flit_hops: noc.flit_hops(),
        links,
        window_cycles: window,
        cycle_ps: noc.cycle_ps(),
    })
}

/// Run `spec` at each of `rates` in order, stopping after the first saturated point. With
/// `parallel`, rates are run a batch of one per worker thread at a time; each point is its own
/// simulation with the same seed, so the curve is identical either way.
pub fn sweep(
    net: &Network,
    routing: NocRouting,
    cfg: &RouterConfig,
    spec: &RunSpec,
    rates: &[f64],
    parallel: bool,
) -> Result<Vec<NocResult>, NocError> {
    let one = |&rate: &f64| {
        run(
            net,
            routing,
            cfg,
            &RunSpec {
                rate,
                ..spec.clone()
            },
        )
    };
    let batch = if parallel {
        rayon::current_num_threads().max(1)
    } else {
        1
    };
    let mut out = Vec::new();
    for chunk in rates.chunks(batch) {
        let results: Vec<Result<NocResult, NocError>> = if parallel {
            chunk.par_iter().map(one).collect()
        } else {
            chunk.iter().map(one).collect()
        };
        for r in results {
            let r = r?;
            let stop = r.saturated;
            out.push(r);
            if stop {
                return Ok(out);
            }
        }
    }
    Ok(out)
}
