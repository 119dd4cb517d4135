//! The slice mix of Table 2 (tpu-v4-isca2023.txt section 2.3 and 2.9) and a scheduler that
//! packs jobs of those sizes onto a TPU v4 pod whose hosts fail.
//!
//! # The mix
//! Table 2 samples the slices used on a day in November 2022 (every slice at >= 0.1%); its
//! shares are the probability that an arriving job asks for that slice. The paper derives from
//! it: 29% of slices are smaller than a 4^3 block, 33% are twistable, 28% twisted, and 40% of
//! the slices of a block or more are twisted (section 2.9); [`Mix::shares`] computes them.
//!
//! # The scheduler (podsim's model; the paper describes none beyond section 2.5)
//! * The pod: 64 blocks of 4x4x4 chips, 16 hosts each. A host fails after an exponential time
//!   with mean `MTBF` and is repaired after an exponential time with mean [`REPAIR_HOURS`]
//!   (an assumption), so that it is up a fraction `A` of the time: MTBF = repair x A / (1 - A).
//!   A block is usable while all of its hosts are up.
//! * Jobs arrive as a Poisson process; each asks for a slice of the mix and runs for an
//!   exponential time of mean [`JOB_HOURS`] (an assumption). The arrival rate offers the pod
//!   `load` of its chips on average.
//! * A slice of a block or more takes N/64 free, usable blocks anywhere (the OCS, section
//!   2.5). A smaller slice takes chips of one usable block that has room (sub-block slices are
//!   packed by chip count; their shapes are not checked).
//! * The queue is served first come, first served with backfill: at every event the waiting
//!   jobs are scanned in arrival order and every one that fits starts.
//! * A host failure stops every job on its block; the job goes back to the head of the queue
//!   with the work it had left (it restarts from a checkpoint taken at the failure).

use std::cmp::Reverse;
use std::collections::VecDeque;

use podsim_engine::RngStreams;
use rand::RngCore;

/// Mean time to repair a host, hours: an assumption.
pub const REPAIR_HOURS: f64 = 2.0;
/// Mean job length, hours: an assumption.
pub const JOB_HOURS: f64 = 4.0;
/// Blocks in the pod.
const BLOCKS: usize = 64;
/// Hosts per block.
const HOSTS: usize = 16;
/// Chips per block.
const BLOCK_CHIPS: u64 = 64;

/// One row of the mix: a slice shape and its share of slices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slice {
    /// Chips along x, y, z.
    pub shape: [u32; 3],
    /// Twisted torus.
    pub twisted: bool,
    /// Twistable shape (n x n x 2n or n x 2n x 2n, n >= 4) run as a regular torus.
    pub twistable_not_twisted: bool,
    /// Share of slices, percent.
    pub percent: f64,
}

impl Slice {
    /// Chips.
    pub fn chips(&self) -> u64 {
        self.shape.iter().map(|&d| u64::from(d)).product()
    }
}

/// A mix of slices.
#[derive(Debug, Clone, PartialEq)]
pub struct Mix {
    /// Its name.
    pub name: &'static str,
    /// The rows.
    pub slices: Vec<Slice>,
}

/// The shares the paper derives from a mix (section 2.9), as fractions.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Shares {
    /// Slices smaller than a 4^3 block.
    pub below_block: f64,
    /// Twistable slices, twisted or not.
    pub twistable: f64,
    /// Twisted slices.
    pub twisted: f64,
    /// Twisted slices among those of a block or more.
    pub twisted_of_block_or_more: f64,
}

impl Mix {
    /// Table 2 of tpu-v4-isca2023.txt, row by row.
    pub fn table2() -> Mix {
        let s = |x: u32, y: u32, z: u32, t: bool, nt: bool, p: f64| Slice {
            shape: [x, y, z],
            twisted: t,
            twistable_not_twisted: nt,
            percent: p,
        };
        Mix {
            name: "table2",
            slices: vec![
                s(1, 1, 1, false, false, 2.1),
                s(1, 1, 2, false, false, 0.4),
                s(1, 2, 2, false, false, 6.7),
                s(2, 2, 2, false, false, 4.7),
                s(2, 2, 4, false, false, 6.4),
                s(2, 4, 4, false, false, 8.9),
                s(4, 4, 4, false, false, 13.9),
                s(4, 4, 8, true, false, 16.0),
                s(4, 4, 8, false, true, 1.5),
                s(4, 4, 12, false, false, 0.7),
                s(4, 8, 8, true, false, 9.2),
                s(4, 8, 8, false, true, 1.5),
                s(4, 4, 16, false, false, 1.0),
                s(8, 8, 16, true, false, 1.8),
                s(8, 8, 16, false, true, 1.4),
                s(4, 16, 16, false, false, 0.3),
                s(8, 8, 8, false, false, 9.6),
                s(4, 8, 16, false, false, 1.7),
                s(4, 4, 32, false, false, 0.6),
                s(8, 8, 12, false, false, 0.7),
                s(8, 12, 16, false, false, 0.1),
                s(8, 16, 16, true, false, 1.4),
                s(8, 16, 16, false, true, 0.3),
                s(12, 16, 16, false, false, 5.7),
                s(4, 4, 192, false, false, 0.4),
            ],
        }
    }

    /// The mix called `name` (`table2`).
    pub fn named(name: &str) -> Option<Mix> {
        (name == "table2").then(Mix::table2)
    }

    /// The shares of section 2.9, from the rows. The percentages are of all slices (Table 2
    /// lists those at 0.1% or more, 97% of the whole), as the paper's derivation takes them.
    pub fn shares(&self) -> Shares {
        let total = 100.0;
        let sum = |f: &dyn Fn(&Slice) -> bool| -> f64 {
            self.slices
                .iter()
                .filter(|s| f(s))
                .map(|s| s.percent)
                .sum::<f64>()
        };
        let below = sum(&|s| s.chips() < BLOCK_CHIPS);
        let twisted = sum(&|s| s.twisted);
        Shares {
            below_block: below / total,
            twistable: sum(&|s| s.twisted || s.twistable_not_twisted) / total,
            twisted: twisted / total,
            twisted_of_block_or_more: twisted / (total - below),
        }
    }
}

/// What the scheduler is asked.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Schedule {
    /// Simulated hours.
    pub hours: f64,
    /// Fraction of time a host is up.
    pub host_availability: f64,
    /// Offered load: arriving chip-hours over the pod's chip-hours.
    pub load: f64,
    /// Seed of the arrival, size, length and failure streams.
    pub seed: u64,
}

/// What the scheduler measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ScheduleReport {
    /// Busy chip-hours over the pod's chip-hours.
    pub utilization: f64,
    /// Usable (all hosts up) block-hours over all block-hours.
    pub usable_fraction: f64,
    /// Mean wait from arrival to first start over the jobs that started, hours (`None` when
    /// none started: the wait is undefined, not zero).
    pub mean_wait_hours: Option<f64>,
    /// Mean wait of the jobs of a block or more that started, hours (`None` when none did).
    pub mean_wait_large_hours: Option<f64>,
    /// Jobs that arrived.
    pub arrived: u64,
    /// Jobs that started at least once.
    pub started: u64,
    /// Jobs that finished.
    pub completed: u64,
    /// Jobs stopped by a host failure.
    pub interrupted: u64,
    /// Jobs still waiting at the end.
    pub waiting_at_end: u64,
}

/// Why a schedule cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScheduleError {
    /// A value out of range.
    #[error("{0}")]
    Invalid(String),
}

#[derive(Debug, Clone, Copy)]
struct Job {
    chips: u64,
    remaining: f64,
    arrived: f64,
    started: bool,
}

#[derive(Debug, Clone)]
struct Running {
    job: Job,
    blocks: Vec<usize>,
    /// Chips taken in the one block of a sub-block slice.
    small: bool,
    since: f64,
    ends: f64,
}

/// Exponential draw of mean `mean` from a 64-bit uniform.
fn exp(rng: &mut podsim_engine::SimRng, mean: f64) -> f64 {
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    -mean * (1.0 - u).ln()
}

/// The waiting jobs, first come, first served (with interrupted jobs back at the head).
trait Waiting {
    fn push_back(&mut self, job: Job);
    fn push_front(&mut self, job: Job);
    fn len(&self) -> usize;
    /// Offer every waiting job, in queue order, to `place`, which starts it (and returns
    /// true) if it fits; started jobs leave the queue.
    fn start_fitting(&mut self, place: &mut dyn FnMut(&Job) -> bool);
}

/// One queue scanned job by job: the reference [`ByClass`] is tested against (it takes time
/// in the queue's length at every event).
#[cfg(test)]
#[derive(Default)]
struct Fifo(VecDeque<Job>);

#[cfg(test)]
impl Waiting for Fifo {
    fn push_back(&mut self, job: Job) {
        self.0.push_back(job);
    }
    fn push_front(&mut self, job: Job) {
        self.0.push_front(job);
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn start_fitting(&mut self, place: &mut dyn FnMut(&Job) -> bool) {
        let mut i = 0;
        while i < self.0.len() {
            if place(&self.0[i]) {
                self.0.remove(i);
            } else {
                i += 1;
            }
        }
    }
}

/// The same queue kept as one queue per slice size, each job with its place in the whole
/// queue. Whether a job fits depends only on its size and the free blocks, and starting jobs
/// only takes blocks, so once a job of some size does not fit, no later job of that size
/// fits in the same pass: a pass offers each size's jobs in turn, by place, and drops a size
/// at its first misfit. The same jobs start, in the same order, as in [`Fifo`], in time in the
/// number of sizes and of jobs started rather than in the queue's length.
#[derive(Default)]
struct ByClass {
    // (chips, jobs with their places, in order).
    classes: Vec<(u64, VecDeque<(i64, Job)>)>,
    // The next place at the tail (counting up) and at the head (counting down).
    back: i64,
    front: i64,
    len: usize,
}

impl ByClass {
    fn class(&mut self, chips: u64) -> &mut VecDeque<(i64, Job)> {
        let i = match self.classes.iter().position(|c| c.0 == chips) {
            Some(i) => i,
            None => {
                self.classes.push((chips, VecDeque::new()));
                self.classes.len() - 1
            }
        };
        &mut self.classes[i].1
    }
}

impl Waiting for ByClass {
    fn push_back(&mut self, job: Job) {
        let at = self.back;
        self.back += 1;
        self.len += 1;
        self.class(job.chips).push_back((at, job));
    }
    fn push_front(&mut self, job: Job) {
        self.front -= 1;
        let at = self.front;
        self.len += 1;
        self.class(job.chips).push_front((at, job));
    }
    fn len(&self) -> usize {
        self.len
    }
    fn start_fitting(&mut self, place: &mut dyn FnMut(&Job) -> bool) {
        let mut live: Vec<usize> = (0..self.classes.len()).collect();
        loop {
            // The live size whose first job is earliest in the queue.
            let next = live
                .iter()
                .enumerate()
                .filter_map(|(k, &c)| self.classes[c].1.front().map(|&(at, _)| (at, k)))
                .min();
            let Some((_, k)) = next else {
                return;
            };
            let c = live[k];
            let job = self.classes[c].1.front().expect("a first job").1;
            if place(&job) {
                self.classes[c].1.pop_front();
                self.len -= 1;
            } else {
                live.swap_remove(k);
            }
        }
    }
}

/// The events a run of `s` on `mix` handles, expected: every host's failures and repairs
/// (two changes per mean time between failures plus repair) and every job's arrival, end and
/// restarts; for the up-front time estimate (the loop handles about 10^7 a second).
pub fn expected_events(mix: &Mix, s: &Schedule) -> f64 {
    let a = s.host_availability;
    let cycle = if a >= 1.0 {
        f64::INFINITY
    } else {
        REPAIR_HOURS * a / (1.0 - a) + REPAIR_HOURS
    };
    let host_changes = (BLOCKS * HOSTS) as f64 * 2.0 * s.hours / cycle;
    host_changes + 2.0 * arrival_rate(mix, s.load) * s.hours
}

/// Jobs arriving per hour so that the arriving chip-hours are `load` x the pod's chips.
fn arrival_rate(mix: &Mix, load: f64) -> f64 {
    let total: f64 = mix.slices.iter().map(|x| x.percent).sum();
    let mean_chips: f64 = mix
        .slices
        .iter()
        .map(|x| x.percent / total * x.chips() as f64)
        .sum();
    load * (BLOCKS as u64 * BLOCK_CHIPS) as f64 / (mean_chips * JOB_HOURS)
}

/// Run the scheduler on `mix`.
pub fn run(mix: &Mix, s: &Schedule) -> Result<ScheduleReport, ScheduleError> {
    run_with(mix, s, ByClass::default())
}

fn run_with<W: Waiting>(
    mix: &Mix,
    s: &Schedule,
    mut queue: W,
) -> Result<ScheduleReport, ScheduleError> {
    if !(s.hours > 0.0 && s.hours <= 1e5) {
        return Err(ScheduleError::Invalid(format!(
            "{} hours is not in (0, 100,000]",
            s.hours
        )));
    }
    if !(s.host_availability > 0.0 && s.host_availability <= 1.0) {
        return Err(ScheduleError::Invalid(format!(
            "host availability {} is not in (0, 1]",
            s.host_availability
        )));
    }
    if !(s.load > 0.0 && s.load <= 4.0) {
        return Err(ScheduleError::Invalid(format!(
            "load {} is not in (0, 4]",
            s.load
        )));
    }
    let total: f64 = mix.slices.iter().map(|x| x.percent).sum();
    let pod_chips = (BLOCKS as u64 * BLOCK_CHIPS) as f64;
    let rate = arrival_rate(mix, s.load);
    let events = expected_events(mix, s);
    podsim_engine::watch::estimate(&format!("about {events:.1e} events"), events / 1e7);
    podsim_engine::watch::begin("simulated hours", s.hours as u64);
    let streams = RngStreams::new(s.seed);
    let mut arrivals = streams.stream("schedule/arrivals");
    let mut hosts_rng = streams.stream("schedule/hosts");
    let a = s.host_availability;
    let mtbf = if a >= 1.0 {
        f64::INFINITY
    } else {
        REPAIR_HOURS * a / (1.0 - a)
    };
    // Per host: up, and the time of its next change. Start in the steady state.
    let mut up = vec![true; BLOCKS * HOSTS];
    let mut next = vec![f64::INFINITY; BLOCKS * HOSTS];
    for h in 0..BLOCKS * HOSTS {
        let u = (hosts_rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        up[h] = u < a;
        next[h] = if up[h] {
            exp(&mut hosts_rng, mtbf)
        } else {
            exp(&mut hosts_rng, REPAIR_HOURS)
        };
    }
    // Every host's next change, earliest first.
    let mut changes: std::collections::BinaryHeap<Reverse<(u64, usize)>> = next
        .iter()
        .enumerate()
        .map(|(h, t)| Reverse((t.to_bits(), h)))
        .collect();
    let mut down_hosts: Vec<u32> = (0..BLOCKS)
        .map(|b| (0..HOSTS).filter(|&i| !up[b * HOSTS + i]).count() as u32)
        .collect();
    let mut usable_blocks = down_hosts.iter().filter(|&&d| d == 0).count();
    // Per block: chips used by small slices, or taken whole.
    let mut small_used = [0u64; BLOCKS];
    let mut whole = [false; BLOCKS];
    let mut running: Vec<Running> = Vec::new();
    // The chips of the running jobs (a whole number, so its sum is exact in any order).
    let mut running_chips = 0u64;
    let mut now = 0.0;
    let mut next_arrival = exp(&mut arrivals, 1.0 / rate);
    let (mut busy, mut usable) = (0.0f64, 0.0f64);
    let (mut arrived, mut started, mut completed, mut interrupted) = (0u64, 0u64, 0u64, 0u64);
    let (mut wait_sum, mut wait_large, mut n_large) = (0.0f64, 0.0f64, 0u64);
    let draw_size = |rng: &mut podsim_engine::SimRng| {
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * total;
        let mut acc = 0.0;
        for x in &mix.slices {
            acc += x.percent;
            if u < acc {
                return x.chips();
            }
        }
        mix.slices.last().map_or(1, |x| x.chips())
    };
    loop {
        // The next event: an arrival, a job's end, a host's change, or the horizon.
        let (mut t, mut what) = (next_arrival, 0u8);
        let end = running
            .iter()
            .enumerate()
            .min_by(|x, y| x.1.ends.total_cmp(&y.1.ends));
        if let Some((_, r)) = end
            && r.ends < t
        {
            t = r.ends;
            what = 1;
        }
        // (Times are at or above zero, where a float's bits order as its value does; the
        // earliest, the lowest host first on a tie.)
        let (hi, ht) = changes
            .peek()
            .map(|Reverse((bits, h))| (*h, f64::from_bits(*bits)))
            .unwrap_or((0, f64::INFINITY));
        if ht < t {
            t = ht;
            what = 2;
        }
        if t >= s.hours {
            t = s.hours;
            what = 3;
        }
        podsim_engine::watch::done(t as u64);
        // Account the interval.
        let dt = t - now;
        busy += dt * running_chips as f64;
        usable += dt * usable_blocks as f64;
        now = t;
        // Whether the event may let a waiting job start: a new job, or blocks freed or made
        // usable. Otherwise every waiting job still does not fit (the last pass left each one
        // out with at least as many blocks as there are now) and the pass is skipped.
        let mut freed = false;
        match what {
            0 => {
                arrived += 1;
                let chips = draw_size(&mut arrivals);
                queue.push_back(Job {
                    chips,
                    remaining: exp(&mut arrivals, JOB_HOURS),
                    arrived: now,
                    started: false,
                });
                next_arrival = now + exp(&mut arrivals, 1.0 / rate);
                freed = true;
            }
            1 => {
                let (i, _) = end.expect("an end was chosen");
                let r = running.swap_remove(i);
                running_chips -= r.job.chips;
                release(&r, &mut small_used, &mut whole);
                completed += 1;
                freed = true;
            }
            2 => {
                let b = hi / HOSTS;
                if up[hi] {
                    up[hi] = false;
                    if down_hosts[b] == 0 {
                        usable_blocks -= 1;
                    }
                    down_hosts[b] += 1;
                    next[hi] = now + exp(&mut hosts_rng, REPAIR_HOURS);
                    changes.pop();
                    changes.push(Reverse((next[hi].to_bits(), hi)));
                    // Every job on the block stops and waits again with the work it has left.
                    let mut i = 0;
                    while i < running.len() {
                        if running[i].blocks.contains(&b) {
                            let mut r = running.swap_remove(i);
                            running_chips -= r.job.chips;
                            freed = true;
                            release(&r, &mut small_used, &mut whole);
                            r.job.remaining -= now - r.since;
                            interrupted += 1;
                            queue.push_front(r.job);
                        } else {
                            i += 1;
                        }
                    }
                } else {
                    up[hi] = true;
                    down_hosts[b] -= 1;
                    if down_hosts[b] == 0 {
                        usable_blocks += 1;
                        freed = true;
                    }
                    next[hi] = now + exp(&mut hosts_rng, mtbf);
                    changes.pop();
                    changes.push(Reverse((next[hi].to_bits(), hi)));
                }
            }
            _ => break,
        }
        if !freed {
            continue;
        }
        // Start every waiting job that fits, in arrival order.
        queue.start_fitting(&mut |job: &Job| {
            let chips = job.chips;
            let placed = if chips >= BLOCK_CHIPS {
                let need = chips.div_ceil(BLOCK_CHIPS) as usize;
                let free: Vec<usize> = (0..BLOCKS)
                    .filter(|&b| down_hosts[b] == 0 && !whole[b] && small_used[b] == 0)
                    .take(need)
                    .collect();
                (free.len() == need).then_some((free, false))
            } else {
                // Best fit: the usable block with the least room that still fits.
                (0..BLOCKS)
                    .filter(|&b| {
                        down_hosts[b] == 0 && !whole[b] && small_used[b] + chips <= BLOCK_CHIPS
                    })
                    .max_by_key(|&b| (small_used[b], std::cmp::Reverse(b)))
                    .map(|b| (vec![b], true))
            };
            let Some((blocks, small)) = placed else {
                return false;
            };
            let mut job = *job;
            for &b in &blocks {
                if small {
                    small_used[b] += chips;
                } else {
                    whole[b] = true;
                }
            }
            if !job.started {
                job.started = true;
                started += 1;
                let w = now - job.arrived;
                wait_sum += w;
                if chips >= BLOCK_CHIPS {
                    wait_large += w;
                    n_large += 1;
                }
            }
            running_chips += job.chips;
            running.push(Running {
                ends: now + job.remaining,
                job,
                blocks,
                small,
                since: now,
            });
            true
        });
    }
    Ok(ScheduleReport {
        utilization: busy / (pod_chips * s.hours),
        usable_fraction: usable / (BLOCKS as f64 * s.hours),
        mean_wait_hours: (started > 0).then(|| wait_sum / started as f64),
        mean_wait_large_hours: (n_large > 0).then(|| wait_large / n_large as f64),
        arrived,
        started,
        completed,
        interrupted,
        waiting_at_end: queue.len() as u64,
    })
}

fn release(r: &Running, small_used: &mut [u64; BLOCKS], whole: &mut [bool; BLOCKS]) {
    for &b in &r.blocks {
        if r.small {
            small_used[b] -= r.job.chips;
        } else {
            whole[b] = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_by_size_starts_what_the_plain_queue_starts() {
        // The same events, the same jobs started in the same order: every figure equal, at
        // loads below and above the pod's capacity, with hosts failing often and rarely.
        for (load, a, hours, seed) in [
            (0.5, 0.99, 2000.0, 1),
            (0.9, 0.99, 3000.0, 2),
            (4.0, 0.999, 500.0, 3),
            (2.0, 0.9, 300.0, 4),
            (1.0, 1.0, 1000.0, 5),
        ] {
            let s = Schedule {
                hours,
                host_availability: a,
                load,
                seed,
            };
            let fast = run_with(&Mix::table2(), &s, ByClass::default()).unwrap();
            let plain = run_with(&Mix::table2(), &s, Fifo::default()).unwrap();
            assert_eq!(fast, plain, "load {load}, availability {a}");
            assert!(fast.started > 100, "{fast:?}");
        }
    }

    #[test]
    fn table2_gives_the_papers_shares() {
        // Section 2.9: 29% below a block (2.1 + 0.4 + 6.7 + 4.7 + 6.4 + 8.9 = 29.2), 33%
        // twistable (16.0 + 1.5 + 9.2 + 1.5 + 1.8 + 1.4 + 1.4 + 0.3 = 33.1), 28% twisted (16.0
        // + 9.2 + 1.8 + 1.4 = 28.4), 40% of the slices of a block or more twisted (28.4 /
        // (100 - 29.2) = 40.1%); the listed rows (>= 0.1% each) sum to 97.0.
        let m = Mix::table2();
        let total: f64 = m.slices.iter().map(|s| s.percent).sum();
        assert!((total - 97.0).abs() < 1e-9, "{total}");
        let s = m.shares();
        assert!((s.below_block - 0.292).abs() < 1e-9);
        assert!((s.twistable - 0.331).abs() < 1e-9);
        assert!((s.twisted - 0.284).abs() < 1e-9);
        assert!((s.twisted_of_block_or_more - 0.284 / 0.708).abs() < 1e-9);
    }

    #[test]
    fn blocks_are_usable_as_often_as_sixteen_hosts_are_all_up() {
        // A block is usable while its 16 hosts are up: A^16 of the time (0.99^16 = 0.851).
        let r = run(
            &Mix::table2(),
            &Schedule {
                hours: 20_000.0,
                host_availability: 0.99,
                load: 0.5,
                seed: 1,
            },
        )
        .unwrap();
        assert!(
            (r.usable_fraction - 0.99f64.powi(16)).abs() < 0.01,
            "{}",
            r.usable_fraction
        );
        // Nothing runs on more chips than the usable blocks hold.
        assert!(r.utilization <= r.usable_fraction + 1e-9);
        assert!(r.interrupted > 0);
    }

    #[test]
    fn a_light_load_is_served_at_once_and_in_full() {
        // With every host up and 10% offered load, jobs hardly wait (a 3K-chip job needs 48
        // free blocks: minutes on average), and the pod's busy share is the offered load
        // (within sampling noise).
        let r = run(
            &Mix::table2(),
            &Schedule {
                hours: 20_000.0,
                host_availability: 1.0,
                load: 0.1,
                seed: 7,
            },
        )
        .unwrap();
        assert!(r.mean_wait_hours.unwrap() < 0.25, "{:?}", r.mean_wait_hours);
        assert!((r.utilization - 0.1).abs() < 0.02, "{}", r.utilization);
        assert_eq!(r.interrupted, 0);
    }

    #[test]
    fn the_same_seed_gives_the_same_schedule() {
        let s = Schedule {
            hours: 500.0,
            host_availability: 0.995,
            load: 0.8,
            seed: 3,
        };
        assert_eq!(run(&Mix::table2(), &s), run(&Mix::table2(), &s));
    }
}
