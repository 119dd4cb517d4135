//! Running a plan on a network model, with the functional check.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use podsim_net::{NetReport, NetworkModel, TransferId};
use podsim_topology::NodeId;
use podsim_units::{Bytes, SimDuration, SimTime};

use crate::plan::{Chunks, Combine, Kind, Plan};
use crate::steps::Steps;

/// Buffer entries (ranks x chunks) above which [`run`] skips the functional check
/// ([`crate::measure`] sets its limit from the memory it may use instead).
pub const VERIFY_LIMIT: usize = 4_000_000;

/// Bytes one entry of the functional check's buffers takes (a hash-map slot of a chunk id and
/// its value, with the map's slack), for memory estimates.
pub const CHECK_ENTRY_BYTES: u64 = 64;

/// Bytes one entry of an exchange's check buffers takes ([`run_exchange`]: dense, a value per
/// receiver and sender).
pub const EXCHANGE_ENTRY_BYTES: u64 = 8;

/// What running a plan found.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// From the first send to the last arrival.
    pub time: SimDuration,
    /// The model's measurements.
    pub report: NetReport,
    /// Whether the buffers hold the right values at the end.
    pub verified: Verified,
    /// Transfers run.
    pub transfers: usize,
}

impl Outcome {
    /// A run that ended at `end` (it started at zero) with the model's `report`, its buffers
    /// checked (`verify`: a failed check is an error before this) or not, and `transfers` run.
    fn at(end: SimTime, report: NetReport, verify: bool, transfers: usize) -> Outcome {
        Outcome {
            time: end - SimTime::ZERO,
            report,
            verified: if verify {
                Verified::Passed
            } else {
                Verified::Skipped
            },
            transfers,
        }
    }
}

/// The functional check's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verified {
    /// Every rank holds exactly what the collective promises.
    Passed,
    /// Not checked (too many buffer entries).
    Skipped,
}

/// Why a plan could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The network refused a transfer.
    #[error("network: {0}")]
    Net(#[from] podsim_net::NetError),
    /// Transfers remain but none is in flight or ready.
    #[error("deadlock: {0} transfers can never start")]
    Stuck(usize),
    /// The network model stopped (a packet-level deadlock, say).
    #[error("network model stopped: {0}")]
    Stopped(String),
    /// A rank ended with the wrong value, or sent a chunk it did not have.
    #[error("wrong result: {0}")]
    Wrong(String),
    /// There are more ranks than endpoints.
    #[error("{ranks} ranks but the network has {endpoints} endpoints")]
    TooManyRanks {
        /// Ranks asked for.
        ranks: usize,
        /// Endpoints available.
        endpoints: usize,
    },
}

/// The starting value of chunk `c` at rank `r`.
pub fn initial(r: usize, c: u32) -> u64 {
    (r as u64 + 1)
        .wrapping_mul(1_000_003)
        .wrapping_add(u64::from(c))
}

/// Every rank's buffer for the functional check: chunk id -> value. Dense (a slot per chunk
/// id, ids below a bound) for every kind but all-to-all, whose ids run to n^2 while each rank
/// holds 2n of them (a map per rank). The dense form keeps pod-scale checks out of hash
/// tables, and lays chunk `c` of rank `r` out by `c / n`, then `(c - r) mod n`, then `r`
/// ([`dense_index`]), with whether the rank holds it in a bit set: in a ring step every rank
/// sends the chunk at one offset from its own number and receives the chunk at the next, so
/// a step reads one run of consecutive slots and writes the next. The slots below
/// `held_below` are all held (all-reduce, reduce-scatter and reduce start with every chunk at
/// every rank and landing never drops one), and their bits are not consulted.
enum Bufs {
    Dense {
        ranks: usize,
        values: Vec<u64>,
        held: Vec<u64>,
        held_below: usize,
    },
    Sparse(Vec<HashMap<u32, u64>>),
}

/// Where chunk `c` of rank `r` (below `n`) lies in dense buffers of `n` ranks.
#[inline]
fn dense_index(n: usize, r: usize, c: u32) -> usize {
    let c = c as usize;
    let (hi, lo) = if c < n { (0, c) } else { (c / n, c % n) };
    let d = if lo >= r { lo - r } else { lo + n - r };
    (hi * n + d) * n + r
}

impl Bufs {
    /// Empty dense buffers of `ranks` ranks with room for `chunks` chunks each.
    fn dense(ranks: usize, chunks: usize) -> Bufs {
        let size = ranks * chunks.div_ceil(ranks.max(1)) * ranks;
        Bufs::Dense {
            ranks,
            values: vec![0; size],
            held: vec![0; size.div_ceil(64)],
            held_below: 0,
        }
    }

    #[inline]
    fn get(&self, r: usize, c: u32) -> Option<u64> {
        match self {
            Bufs::Dense {
                ranks,
                values,
                held,
                held_below,
            } => {
                let k = dense_index(*ranks, r, c);
                if k < *held_below {
                    return Some(values[k]);
                }
                let on = held.get(k / 64).is_some_and(|w| w >> (k % 64) & 1 == 1);
                on.then(|| values[k])
            }
            Bufs::Sparse(m) => sparse_get(m, r, c),
        }
    }

    /// Chunk `c`'s value at rank `r`, zero if it has none yet.
    #[inline(always)]
    fn slot(&mut self, r: usize, c: u32) -> &mut u64 {
        match self {
            Bufs::Dense {
                ranks,
                values,
                held,
                held_below,
            } => {
                let k = dense_index(*ranks, r, c);
                if k < *held_below {
                    return &mut values[k];
                }
                if values.len() <= k {
                    grow(values, held, (c as usize / *ranks + 1) * *ranks * *ranks);
                }
                let (w, bit) = (k / 64, 1u64 << (k % 64));
                if held[w] & bit == 0 {
                    held[w] |= bit;
                    values[k] = 0;
                }
                &mut values[k]
            }
            Bufs::Sparse(m) => sparse_slot(m, r, c),
        }
    }
}

// The rare paths of `Bufs::get` and `Bufs::slot`, out of line so that the dense paths inline.

#[inline(never)]
fn sparse_get(m: &[HashMap<u32, u64>], r: usize, c: u32) -> Option<u64> {
    m[r].get(&c).copied()
}

#[inline(never)]
fn sparse_slot(m: &mut [HashMap<u32, u64>], r: usize, c: u32) -> &mut u64 {
    m[r].entry(c).or_insert(0)
}

/// Dense buffers grown to `size` slots.
#[cold]
fn grow(values: &mut Vec<u64>, held: &mut Vec<u64>, size: usize) {
    values.resize(size, 0);
    held.resize(values.len().div_ceil(64), 0);
}

/// Call `f` on every (slot, rank, chunk) of `n` ranks and `chunks` chunks in the dense
/// buffers' memory order ([`dense_index`]: the slot), stopping at the first error.
fn in_memory_order(
    n: usize,
    chunks: usize,
    f: &mut dyn FnMut(usize, usize, u32) -> Result<(), RunError>,
) -> Result<(), RunError> {
    let m = n.max(1);
    let mut k = 0;
    for hi in 0..chunks.div_ceil(m) {
        for d in 0..m {
            for r in 0..n {
                let lo = if r + d >= m { r + d - m } else { r + d };
                let c = hi * m + lo;
                if c < chunks {
                    f(k, r, c as u32)?;
                }
                k += 1;
            }
        }
    }
    Ok(())
}

fn initial_buffers(kind: Kind, n: usize, chunks: usize) -> Bufs {
    if kind == Kind::AllToAll {
        return Bufs::Sparse(
            (0..n)
                .map(|r| {
                    (0..n as u32)
                        .map(|t| ((r * n) as u32 + t, initial(r, (r * n) as u32 + t)))
                        .collect()
                })
                .collect(),
        );
    }
    let mut bufs = Bufs::dense(n, chunks.max(n));
    if let (
        Kind::AllReduce | Kind::ReduceScatter | Kind::Reduce,
        Bufs::Dense {
            values,
            held,
            held_below,
            ..
        },
    ) = (kind, &mut bufs)
    {
        // Every rank holds every chunk, chunk hi n + (r + d) mod n of rank r in slot
        // (hi n + d) n + r (`dense_index`): filled in that order. The whole blocks of n
        // chunks need no bits; the last block's chunks, when it is not whole, have theirs.
        let m = n.max(1);
        let whole = chunks / m * m * m;
        let mut k = 0;
        for hi in 0..chunks.div_ceil(m) {
            for d in 0..n {
                for r in 0..n {
                    let lo = if r + d >= n { r + d - n } else { r + d };
                    let c = hi * n + lo;
                    if c < chunks {
                        values[k] = initial(r, c as u32);
                        if k >= whole {
                            held[k / 64] |= 1 << (k % 64);
                        }
                    }
                    k += 1;
                }
            }
        }
        *held_below = whole;
        return bufs;
    }
    let chunks = chunks as u32;
    let mut set = |r: usize, c: u32, v: u64| *bufs.slot(r, c) = v;
    match kind {
        Kind::AllReduce | Kind::ReduceScatter | Kind::Reduce => {
            (0..chunks).for_each(|c| (0..n).for_each(|r| set(r, c, initial(r, c))))
        }
        Kind::AllGather => (0..n).for_each(|r| set(r, r as u32, initial(r, r as u32))),
        Kind::Broadcast => (0..chunks).for_each(|c| set(0, c, initial(0, c))),
        Kind::AllToAll => {}
        Kind::Barrier => (0..n).for_each(|r| set(r, r as u32, 1)),
    }
    bufs
}

/// Whether every rank holds what `kind` promises: scanned in memory order first (fast), and
/// when something is wrong, again rank by rank so the error names the first wrong rank.
fn check(kind: Kind, n: usize, chunks: usize, bufs: &Bufs) -> Result<(), RunError> {
    check_in(kind, n, chunks, bufs, true).or_else(|_| check_in(kind, n, chunks, bufs, false))
}

fn check_in(
    kind: Kind,
    n: usize,
    chunks: usize,
    bufs: &Bufs,
    memory_order: bool,
) -> Result<(), RunError> {
    // Each chunk's sum over the ranks, once (not once per rank: n^2 x chunks at pod scale).
    let sums: Vec<u64> = match kind {
        Kind::AllReduce | Kind::ReduceScatter | Kind::Reduce => (0..chunks as u32)
            .map(|c| (0..n).fold(0u64, |a, r| a.wrapping_add(initial(r, c))))
            .collect(),
        _ => Vec::new(),
    };
    let sum = |c: u32| sums[c as usize];
    // All-reduce on dense buffers whose every slot is held: straight through the values in
    // memory order (slot (hi n + d) n + r holds chunk hi n + (r + d) mod n of rank r).
    if let (
        true,
        Kind::AllReduce,
        Bufs::Dense {
            values, held_below, ..
        },
    ) = (memory_order, kind, bufs)
        && n > 0
        && *held_below == n * chunks
    {
        let mut rows = values[..n * chunks].chunks_exact(n);
        for hi in 0..chunks / n {
            for (d, row) in (0..n).zip(&mut rows) {
                // Ranks r < n - d hold chunk hi n + r + d, the others hi n + r + d - n.
                let want = &sums[hi * n..(hi + 1) * n];
                let (a, b) = row.split_at(n - d);
                if a != &want[d..] || b != &want[..d] {
                    return Err(RunError::Wrong(format!("all-reduce slot row {d}")));
                }
            }
        }
        return Ok(());
    }
    let expect = |r: usize, c: u32, want: u64| -> Result<(), RunError> {
        match bufs.get(r, c) {
            Some(v) if v == want => Ok(()),
            got => Err(RunError::Wrong(format!(
                "rank {r} chunk {c}: expected {want}, found {got:?}"
            ))),
        }
    };
    let chunks = chunks as u32;
    // Every (rank, chunk) of `ranks` x `chunks`, rank by rank, or in the dense buffers'
    // memory order (chunk c / n, then (c - r) mod n, then r).
    let grid = |ranks: usize,
                chunks: u32,
                f: &dyn Fn(usize, u32) -> Result<(), RunError>|
     -> Result<(), RunError> {
        if memory_order {
            in_memory_order(ranks, chunks as usize, &mut |_, r, c| f(r, c))?;
        } else {
            for r in 0..ranks {
                (0..chunks).try_for_each(|c| f(r, c))?;
            }
        }
        Ok(())
    };
    match kind {
        Kind::AllReduce => grid(n, chunks, &|r, c| expect(r, c, sum(c)))?,
        Kind::ReduceScatter => {
            // The ring leaves chunk c fully reduced at rank c - 1.
            for c in 0..chunks {
                expect((c as usize + n - 1) % n, c, sum(c))?;
            }
        }
        Kind::AllGather => grid(n, chunks, &|r, c| expect(r, c, initial(c as usize, c)))?,
        Kind::Broadcast => grid(n, chunks, &|r, c| expect(r, c, initial(0, c)))?,
        Kind::Reduce => {
            for c in 0..chunks {
                expect(0, c, sum(c))?;
            }
        }
        Kind::AllToAll => {
            for t in 0..n {
                for s in 0..n {
                    let id = (s * n + t) as u32;
                    expect(t, id, initial(s, id))?;
                }
            }
        }
        Kind::Barrier => grid(n, n as u32, &|r, c| expect(r, c, 1))?,
    }
    Ok(())
}

/// Run `plan` (a `kind` collective) on `model`, rank i on endpoint `nodes[i]`, starting at time
/// zero. A transfer starts when its dependencies have arrived, plus `reduce_ps_per_byte` times
/// the bytes of a dependency that reduces. Buffers are checked at the end when small enough.
pub fn run(
    plan: &Plan,
    kind: Kind,
    model: &mut dyn NetworkModel,
    nodes: &[NodeId],
    reduce_ps_per_byte: f64,
) -> Result<Outcome, RunError> {
    run_checking(plan, kind, model, nodes, reduce_ps_per_byte, VERIFY_LIMIT)
}

/// The buffer entries the functional check of `plan` holds (every rank's chunks; for
/// all-to-all, the n blocks each rank starts or ends with, n^2 in all).
pub fn check_entries(plan: &Plan, kind: Kind) -> usize {
    entries(kind, plan.ranks, plan.chunks)
}

/// [`check_entries`] of a plan of `ranks` ranks and `chunks` chunks per buffer.
pub fn entries(kind: Kind, ranks: usize, chunks: usize) -> usize {
    if kind == Kind::AllToAll {
        ranks.saturating_mul(ranks)
    } else {
        ranks.saturating_mul(chunks)
    }
}

/// [`run`], checking the result when it holds at most `verify_limit` buffer entries.
pub fn run_checking(
    plan: &Plan,
    kind: Kind,
    model: &mut dyn NetworkModel,
    nodes: &[NodeId],
    reduce_ps_per_byte: f64,
    verify_limit: usize,
) -> Result<Outcome, RunError> {
    if nodes.len() < plan.ranks {
        return Err(RunError::TooManyRanks {
            ranks: plan.ranks,
            endpoints: nodes.len(),
        });
    }
    let verify = check_entries(plan, kind) <= verify_limit;
    let mut bufs = if verify {
        initial_buffers(kind, plan.ranks, plan.chunks)
    } else {
        Bufs::Sparse(Vec::new())
    };
    let ops = &plan.ops;
    podsim_engine::watch::begin("transfers delivered", ops.len() as u64);
    let mut waiting: Vec<usize> = plan.waiting().collect();
    // Per op, its sender's next op in program order, released when this one leaves.
    let next_in_order = plan.next_in_order();
    let mut ready_at: Vec<SimTime> = vec![SimTime::ZERO; ops.len()];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); ops.len()];
    for (i, o) in ops.iter().enumerate() {
        for &d in &o.deps {
            dependents[d].push(i);
        }
    }
    let mut to_send: BinaryHeap<Reverse<(SimTime, usize)>> = (0..ops.len())
        .filter(|&i| waiting[i] == 0)
        .map(|i| Reverse((SimTime::ZERO, i)))
        .collect();
    let mut in_flight: Flight<(usize, Vec<u64>)> = Flight::default();
    let mut done = 0;
    let mut end = SimTime::ZERO;
    while done < ops.len() {
        let next_net = model.next_completion();
        let next_send = to_send.peek().map(|r| r.0.0);
        // Sends strictly before the next completion go first; at equal times completions are
        // taken first, and the send follows in the next turn.
        let send_first = match (next_send, next_net) {
            (Some(s), Some(n)) => s < n,
            (Some(_), None) => true,
            (None, _) => false,
        };
        match (send_first, next_net) {
            (true, _) => {
                let Some(Reverse((t, i))) = to_send.pop() else {
                    break;
                };
                // Every other send due at the same instant goes out with this one.
                let mut batch = vec![i];
                while let Some(&Reverse((t2, j))) = to_send.peek() {
                    if t2 != t {
                        break;
                    }
                    to_send.pop();
                    batch.push(j);
                }
                for i in batch {
                    let o = &ops[i];
                    let payload = if verify {
                        o.chunks
                            .iter()
                            .map(|c| match (bufs.get(o.src, c), o.combine) {
                                (Some(v), _) => Ok(v),
                                // A flag not yet raised is a zero.
                                (None, Combine::Or) => Ok(0),
                                (None, _) => Err(RunError::Wrong(format!(
                                    "rank {} sends chunk {c} it does not hold",
                                    o.src
                                ))),
                            })
                            .collect::<Result<Vec<u64>, RunError>>()?
                    } else {
                        Vec::new()
                    };
                    let id = model.send(t, nodes[o.src], nodes[o.dst], Bytes(o.bytes), i as u64)?;
                    in_flight.insert(id, (i, payload));
                    if let Some(j) = next_in_order[i] {
                        ready_at[j] = ready_at[j].max(t);
                        waiting[j] -= 1;
                        if waiting[j] == 0 {
                            to_send.push(Reverse((ready_at[j], j)));
                        }
                    }
                }
            }
            (false, Some(t)) => {
                for c in model.advance(t) {
                    let Some((i, payload)) = in_flight.remove(c.id) else {
                        continue;
                    };
                    let o = &ops[i];
                    if verify {
                        for (dc, v) in o.chunks.iter().zip(payload) {
                            let slot = bufs.slot(o.dst, dc);
                            *slot = match o.combine {
                                Combine::Copy => v,
                                Combine::Sum => slot.wrapping_add(v),
                                Combine::Or => *slot | v,
                            };
                        }
                    }
                    done += 1;
                    end = end.max(c.end);
                    podsim_engine::watch::done(done as u64);
                    podsim_engine::watch::simulated_ps(end.as_ps());
                    let delay = if o.reduces {
                        (o.bytes as f64 * reduce_ps_per_byte).ceil() as u64
                    } else {
                        0
                    };
                    for &d in &dependents[i] {
                        ready_at[d] = ready_at[d].max(c.end + SimDuration::from_ps(delay));
                        waiting[d] -= 1;
                        if waiting[d] == 0 {
                            to_send.push(Reverse((ready_at[d].max(t), d)));
                        }
                    }
                }
            }
            (false, None) => {
                return Err(match model.failure() {
                    Some(why) => RunError::Stopped(why),
                    None => RunError::Stuck(ops.len() - done),
                });
            }
        }
    }
    if verify {
        check(kind, plan.ranks, plan.chunks, &bufs)?;
    }
    Ok(Outcome::at(end, model.report(), verify, ops.len()))
}

/// Run a direct all-to-all of `block` bytes from every rank to every other, rank i on endpoint
/// `nodes[i]`, as one [`podsim_net::Exchange`] at time zero, when the model takes it: the same
/// transfers (rank i to rank (i + k) mod n, tagged with their place in the plan, which is
/// their op's index), the same completions and so the same outcome as [`run_checking`] on the
/// direct plan, holding nothing per transfer. `None` when the model declines (nothing was
/// sent). With `verify`, each rank's received blocks are checked in dense buffers (a value
/// per receiver and sender, [`EXCHANGE_ENTRY_BYTES`] each): every block arrives once, at the
/// rank it was for, with the value its sender started with.
pub fn run_exchange(
    n: usize,
    block: u64,
    model: &mut dyn NetworkModel,
    nodes: &[NodeId],
    verify: bool,
) -> Result<Option<Outcome>, RunError> {
    if nodes.len() < n {
        return Err(RunError::TooManyRanks {
            ranks: n,
            endpoints: nodes.len(),
        });
    }
    let total = n * n.saturating_sub(1);
    let x = podsim_net::Exchange {
        at: SimTime::ZERO,
        nodes: &nodes[..n],
        bytes: Bytes(block),
        tag: 0,
    };
    // Block (s, t), chunk id s n + t, starts at rank s and must end at rank t: what arrives
    // at each rank, slot (s, t) in sender-major order (a sender's blocks land in one row),
    // each receiver's own block in place from the start.
    const NONE: u64 = u64::MAX;
    let chunk = |s: usize, t: usize| (s * n + t) as u32;
    let mut recv: Vec<u64> = Vec::new();
    // Each node's rank.
    let mut rank_of: Vec<u32> = Vec::new();
    if verify {
        recv = vec![NONE; n * n];
        for t in 0..n {
            recv[t * n + t] = initial(t, chunk(t, t));
        }
        let top = nodes[..n]
            .iter()
            .map(|v| v.0 as usize + 1)
            .max()
            .unwrap_or(0);
        rank_of = vec![u32::MAX; top];
        for (r, v) in nodes[..n].iter().enumerate() {
            rank_of[v.0 as usize] = r as u32;
        }
    }
    let mut end = SimTime::ZERO;
    let mut done = 0usize;
    let mut twice: Option<(usize, usize)> = None;
    podsim_engine::watch::begin("transfers delivered", total as u64);
    let ran = model.exchange(&x, &mut |c| {
        done += 1;
        end = end.max(c.end);
        if verify {
            let (s, t) = (
                rank_of[c.src.0 as usize] as usize,
                rank_of[c.dst.0 as usize] as usize,
            );
            let slot = &mut recv[s * n + t];
            if *slot != NONE {
                twice.get_or_insert((s, t));
            }
            *slot = initial(s, chunk(s, t));
        }
    });
    match ran {
        None => return Ok(None),
        Some(r) => r?,
    }
    podsim_engine::watch::done(done as u64);
    podsim_engine::watch::simulated_ps(end.as_ps());
    if done != total {
        return Err(RunError::Wrong(format!(
            "{done} of the all-to-all's {total} transfers arrived"
        )));
    }
    if verify {
        if let Some((s, t)) = twice {
            return Err(RunError::Wrong(format!(
                "rank {t} received block {} twice",
                chunk(s, t)
            )));
        }
        for s in 0..n {
            for t in 0..n {
                let want = initial(s, chunk(s, t));
                let got = recv[s * n + t];
                if got != want {
                    return Err(RunError::Wrong(format!(
                        "rank {t} chunk {}: expected {want}, found {:?}",
                        chunk(s, t),
                        (got != NONE).then_some(got)
                    )));
                }
            }
        }
    }
    Ok(Some(Outcome::at(end, model.report(), verify, total)))
}

/// What a transfer in flight carries for the functional check.
enum Payload {
    None,
    One(u64),
    Many(Box<[u64]>),
}

/// The values of `chunks` at rank `src` when it sends them (a flag not yet raised is a zero).
#[inline(always)]
fn read(bufs: &Bufs, src: usize, chunks: &Chunks, combine: Combine) -> Result<Payload, RunError> {
    let value = |c: u32| match (bufs.get(src, c), combine) {
        (Some(v), _) => Ok(v),
        (None, Combine::Or) => Ok(0),
        (None, _) => Err(RunError::Wrong(format!(
            "rank {src} sends chunk {c} it does not hold"
        ))),
    };
    Ok(match chunks {
        Chunks::Range(a, b) if b.checked_sub(*a) == Some(1) => Payload::One(value(*a)?),
        _ => Payload::Many(chunks.iter().map(value).collect::<Result<_, _>>()?),
    })
}

/// Land `payload` in `chunks` of rank `dst`.
#[inline(always)]
fn land(bufs: &mut Bufs, dst: usize, chunks: &Chunks, combine: Combine, payload: Payload) {
    let mut put = |c: u32, v: u64| {
        let slot = bufs.slot(dst, c);
        *slot = match combine {
            Combine::Copy => v,
            Combine::Sum => slot.wrapping_add(v),
            Combine::Or => *slot | v,
        };
    };
    match payload {
        Payload::None => {}
        Payload::One(v) => match chunks {
            Chunks::Range(a, _) => put(*a, v),
            Chunks::List(l) => {
                if let Some(&c) = l.first() {
                    put(c, v);
                }
            }
        },
        Payload::Many(vs) => chunks.iter().zip(vs).for_each(|(c, v)| put(c, v)),
    }
}

/// Sort `batch` (distinct indices). A batch is mostly a few ascending runs: a ring step's
/// dependents arrive in order but for the one of the last rank, which comes first in the next
/// step (a rotation, undone in linear time), and the completions of one instant come in the
/// order of the sends they came from, a run per send instant. Runs are merged pairwise
/// through `scratch` (linear time per round, rounds the log of the runs); a batch of many
/// runs is sorted.
fn in_order<T: Ord + Copy>(batch: &mut [T], scratch: &mut Vec<T>) {
    let mut bounds: Vec<usize> = std::iter::once(0)
        .chain(
            batch
                .windows(2)
                .enumerate()
                .filter(|(_, w)| w[0] > w[1])
                .map(|(i, _)| i + 1),
        )
        .chain(std::iter::once(batch.len()))
        .collect();
    match bounds.len() - 1 {
        0 | 1 => return,
        2 if batch.last() < batch.first() => {
            batch.rotate_left(bounds[1]);
            return;
        }
        runs if runs > 32 => {
            batch.sort_unstable();
            return;
        }
        _ => {}
    }
    while bounds.len() > 2 {
        let mut next = Vec::with_capacity(bounds.len() / 2 + 2);
        for w in bounds.windows(3).step_by(2) {
            merge(batch, w[0], w[1], w[2], scratch);
            next.push(w[0]);
        }
        if bounds.len().is_multiple_of(2) {
            // An odd run out: it waits for the next round.
            next.push(bounds[bounds.len() - 2]);
        }
        next.push(batch.len());
        bounds = next;
    }
}

/// Merge the ascending runs `batch[a..b]` and `batch[b..c]` into `batch[a..c]`.
fn merge<T: Ord + Copy>(batch: &mut [T], a: usize, b: usize, c: usize, scratch: &mut Vec<T>) {
    scratch.clear();
    scratch.extend_from_slice(&batch[a..b]);
    let (mut i, mut j, mut o) = (0, b, a);
    while i < scratch.len() {
        if j < c && batch[j] < scratch[i] {
            batch[o] = batch[j];
            j += 1;
        } else {
            batch[o] = scratch[i];
            i += 1;
        }
        o += 1;
    }
}

/// Values keyed by transfer id, for the transfers in flight: ids a model hands out in
/// sequence sit in a window from the oldest in flight; any other id in a map.
struct Flight<T> {
    base: u64,
    window: std::collections::VecDeque<Option<T>>,
    others: podsim_net::FastMap<TransferId, T>,
}

impl<T> Default for Flight<T> {
    fn default() -> Self {
        Flight {
            base: 0,
            window: std::collections::VecDeque::new(),
            others: podsim_net::FastMap::default(),
        }
    }
}

/// How far past the window's end an id may land in it (further ones go to the map).
const FLIGHT_REACH: u64 = 1 << 16;

impl<T> Flight<T> {
    fn insert(&mut self, id: TransferId, v: T) {
        if self.window.is_empty() {
            self.base = id.0;
        }
        let end = self.base + self.window.len() as u64;
        if id.0 >= self.base && id.0 < end + FLIGHT_REACH {
            let k = (id.0 - self.base) as usize;
            if k == self.window.len() {
                self.window.push_back(Some(v));
                return;
            }
            if k > self.window.len() {
                self.window.resize_with(k + 1, || None);
            }
            if self.window[k].is_none() {
                self.window[k] = Some(v);
                return;
            }
        }
        self.others.insert(id, v);
    }

    fn remove(&mut self, id: TransferId) -> Option<T> {
        if id.0 >= self.base {
            let k = (id.0 - self.base) as usize;
            if let Some(v) = self.window.get_mut(k).and_then(Option::take) {
                while let Some(None) = self.window.front() {
                    self.window.pop_front();
                    self.base += 1;
                }
                return Some(v);
            }
        }
        self.others.remove(&id)
    }
}

/// What the transfers in flight of a run in steps carry, keyed by their tag `b x ranks + r`
/// (step b, sender r): a slot per rank for each step with a transfer in flight. A run holds a
/// few such steps at once (a ring's ranks keep close to one another; a bidirectional ring's
/// two rings are one step each), so a step is found by a short scan from the last one used,
/// and its slots are recycled when its last transfer lands. No hashing, no division.
struct StepFlight<T> {
    n: usize,
    open: Vec<OpenStep<T>>,
    // Slots of steps no longer in flight, all empty, for reuse.
    spare: Vec<Vec<Option<T>>>,
    // The entry of `open` used last.
    hint: usize,
}

/// One step with transfers in flight.
struct OpenStep<T> {
    // Its step b, and the tag of its rank 0: b x ranks.
    step: usize,
    base: usize,
    slots: Vec<Option<T>>,
    live: usize,
}

impl<T> StepFlight<T> {
    fn new(n: usize) -> Self {
        StepFlight {
            n,
            open: Vec::new(),
            spare: Vec::new(),
            hint: 0,
        }
    }

    /// The entry of `open` holding `tag`, if any.
    fn find(&mut self, tag: usize) -> Option<usize> {
        let n = self.n;
        let holds = |o: &OpenStep<T>| tag >= o.base && tag - o.base < n;
        if self.open.get(self.hint).is_some_and(holds) {
            return Some(self.hint);
        }
        let k = self.open.iter().position(holds)?;
        self.hint = k;
        Some(k)
    }

    /// Keep `v` for rank `r`'s transfer of step `b`.
    fn insert(&mut self, b: usize, r: usize, v: T) {
        let tag = b * self.n + r;
        let k = match self.find(tag) {
            Some(k) => k,
            None => {
                let mut slots = self.spare.pop().unwrap_or_default();
                slots.resize_with(self.n, || None);
                self.open.push(OpenStep {
                    step: b,
                    base: b * self.n,
                    slots,
                    live: 0,
                });
                self.hint = self.open.len() - 1;
                self.hint
            }
        };
        let o = &mut self.open[k];
        if o.slots[r].replace(v).is_none() {
            o.live += 1;
        }
    }

    /// Take what the transfer tagged `tag` carries: its step, its sender and the value.
    fn remove(&mut self, tag: usize) -> Option<(usize, usize, T)> {
        let k = self.find(tag)?;
        let o = &mut self.open[k];
        let r = tag - o.base;
        let v = o.slots[r].take()?;
        let b = o.step;
        o.live -= 1;
        if o.live == 0 {
            let done = self.open.swap_remove(k);
            self.spare.push(done.slots);
        }
        Some((b, r, v))
    }
}

/// [`run_steps`] on a model whose transfers do not affect one another
/// ([`NetworkModel::alone`]: the analytic model), with no queue: a transfer's send time is
/// known as soon as its dependency's end is, so the steps are timed in order, step b's sends
/// from step b - 1's ends (rank r's transfer of step b leaves when the one it received in step
/// b - 1 has arrived, plus the reduction's time, exactly as [`run_steps`] releases it: there
/// `advance` hands back every completion at its own end), and the data moved and checked in
/// the same order where the steps allow it ([`Steps::in_step_order`]). The same times, figures
/// and verdict as [`run_steps`]' queue on the same model, bit for bit (tested on random tori;
/// that path is the oracle). `None`, with the model unchanged but for the caches its costs
/// fill, when the model does not cost transfers alone, the steps do not allow it, or
/// anything would fail: the queue then runs, and fails as it does.
pub(crate) fn run_steps_alone<S: Steps + ?Sized>(
    steps: &S,
    kind: Kind,
    model: &mut dyn NetworkModel,
    nodes: &[NodeId],
    reduce_ps_per_byte: f64,
    verify: bool,
) -> Option<Outcome> {
    let n = steps.ranks();
    let blocks = steps.steps();
    let total = steps.transfers();
    if total == 0 || !steps.in_step_order() {
        return None;
    }
    // The first transfer asks the model; a model that does not cost transfers alone says so
    // before anything is built.
    let first = steps.op(0, 0);
    model.alone(
        SimTime::ZERO,
        nodes[0],
        nodes[first.dst],
        Bytes(first.bytes),
    )?;
    let mut bufs = if verify {
        initial_buffers(kind, n, steps.chunks())
    } else {
        Bufs::Sparse(Vec::new())
    };
    podsim_engine::watch::begin("transfers delivered", total as u64);
    // When each rank's transfer of the step in hand leaves, and of the next.
    let mut ready = vec![SimTime::ZERO; n];
    let mut next = vec![SimTime::ZERO; n];
    let (mut bytes, mut on_wire) = (0u128, 0u128);
    let mut end = SimTime::ZERO;
    for b in 0..blocks {
        if steps.starts_chain(b) {
            ready.fill(SimTime::ZERO);
        }
        for (r, &at) in ready.iter().enumerate() {
            let o = steps.op(b, r);
            let (e, w) = model.alone(at, nodes[r], nodes[o.dst], Bytes(o.bytes))?;
            bytes += u128::from(o.bytes);
            on_wire += u128::from(w);
            end = end.max(e);
            let delay = if o.reduces && reduce_ps_per_byte != 0.0 {
                (o.bytes as f64 * reduce_ps_per_byte).ceil() as u64
            } else {
                0
            };
            next[o.dst] = e + SimDuration::from_ps(delay);
            if verify {
                let payload = read(&bufs, r, &o.chunks, o.combine).ok()?;
                land(&mut bufs, o.dst, &o.chunks, o.combine, payload);
            }
        }
        std::mem::swap(&mut ready, &mut next);
        podsim_engine::watch::done(((b + 1) * n) as u64);
        podsim_engine::watch::simulated_ps(end.as_ps());
    }
    if verify {
        check(kind, n, steps.chunks(), &bufs).ok()?;
    }
    let settled = podsim_net::Settled {
        transfers: total as u64,
        bytes,
        on_wire,
        until: end,
    };
    if !model.settle(settled) {
        return None;
    }
    Some(Outcome::at(end, model.report(), verify, total))
}

/// Run a plan given in steps ([`Steps`]) on `model`, rank i on endpoint `nodes[i]`: the same
/// sends at the same instants in the same order, the same completions taken the same way and
/// the same functional check as [`run_checking`] on the equivalent materialised plan (so the
/// same outcome on any model), holding only the transfers in flight and those ready to go
/// rather than every transfer of the plan.
pub fn run_steps<S: Steps + ?Sized>(
    steps: &S,
    kind: Kind,
    model: &mut dyn NetworkModel,
    nodes: &[NodeId],
    reduce_ps_per_byte: f64,
    verify_limit: usize,
) -> Result<Outcome, RunError> {
    let (n, chunks) = (steps.ranks(), steps.chunks());
    if nodes.len() < n {
        return Err(RunError::TooManyRanks {
            ranks: n,
            endpoints: nodes.len(),
        });
    }
    let verify = entries(kind, n, chunks) <= verify_limit;
    if let Some(out) = run_steps_alone(steps, kind, model, nodes, reduce_ps_per_byte, verify) {
        return Ok(out);
    }
    let mut bufs = if verify {
        initial_buffers(kind, n, chunks)
    } else {
        Bufs::Sparse(Vec::new())
    };
    let blocks = steps.steps();
    let total = steps.transfers();
    podsim_engine::watch::begin("transfers delivered", total as u64);
    // Transfers ready to go by the instant they may leave, as (step, rank): at one instant
    // they leave in that order, which is the order of their index in the equivalent plan
    // (step x ranks + rank), as from the materialised plan's heap.
    let mut to_send: BTreeMap<SimTime, Vec<(usize, usize)>> = BTreeMap::new();
    for b in (0..blocks).filter(|&b| steps.starts_chain(b)) {
        to_send
            .entry(SimTime::ZERO)
            .or_default()
            .extend((0..n).map(|r| (b, r)));
    }
    let mut in_flight: StepFlight<Payload> = StepFlight::new(n);
    // The last batch sent, emptied, for the next instant's (a ring step's n entries each).
    let mut spare: Vec<(usize, usize)> = Vec::new();
    // Scratch space for putting a batch in order.
    let mut merged: Vec<(usize, usize)> = Vec::new();
    let mut next: Vec<(SimTime, (usize, usize))> = Vec::new();
    let mut done_now: Vec<podsim_net::Completion> = Vec::new();
    let mut done = 0;
    let mut end = SimTime::ZERO;
    while done < total {
        let next_net = model.next_completion();
        let next_send = to_send.first_key_value().map(|(&t, _)| t);
        let send_first = match (next_send, next_net) {
            (Some(s), Some(n)) => s < n,
            (Some(_), None) => true,
            (None, _) => false,
        };
        match (send_first, next_net) {
            (true, _) => {
                let Some((t, mut batch)) = to_send.pop_first() else {
                    break;
                };
                in_order(&mut batch, &mut merged);
                for &(b, r) in &batch {
                    let o = steps.op(b, r);
                    let payload = if verify {
                        read(&bufs, r, &o.chunks, o.combine)?
                    } else {
                        Payload::None
                    };
                    let tag = (b * n + r) as u64;
                    model.send(t, nodes[r], nodes[o.dst], Bytes(o.bytes), tag)?;
                    in_flight.insert(b, r, payload);
                }
                batch.clear();
                spare = batch;
            }
            (false, Some(t)) => {
                next.clear();
                done_now.clear();
                model.advance_into(t, &mut done_now);
                for c in done_now.drain(..) {
                    let Some((b, r, payload)) = usize::try_from(c.tag)
                        .ok()
                        .and_then(|tag| in_flight.remove(tag))
                    else {
                        continue;
                    };
                    let o = steps.op(b, r);
                    if verify {
                        land(&mut bufs, o.dst, &o.chunks, o.combine, payload);
                    }
                    done += 1;
                    end = end.max(c.end);
                    let delay = if o.reduces && reduce_ps_per_byte != 0.0 {
                        (o.bytes as f64 * reduce_ps_per_byte).ceil() as u64
                    } else {
                        0
                    };
                    // Its one dependent: what the receiver sends in the next step.
                    if b + 1 < blocks && !steps.starts_chain(b + 1) {
                        let at = (c.end + SimDuration::from_ps(delay)).max(t);
                        next.push((at, (b + 1, o.dst)));
                    }
                }
                // Progress once per instant (its completions end together).
                podsim_engine::watch::done(done as u64);
                podsim_engine::watch::simulated_ps(end.as_ps());
                // Into the queue a run of equal instants at a time.
                for run in next.chunk_by(|x, y| x.0 == y.0) {
                    to_send
                        .entry(run[0].0)
                        .or_insert_with(|| std::mem::take(&mut spare))
                        .extend(run.iter().map(|x| x.1));
                }
            }
            (false, None) => {
                return Err(match model.failure() {
                    Some(why) => RunError::Stopped(why),
                    None => RunError::Stuck(total - done),
                });
            }
        }
    }
    if verify {
        check(kind, n, chunks, &bufs)?;
    }
    Ok(Outcome::at(end, model.report(), verify, total))
}

#[cfg(test)]
mod layout_tests {
    use super::*;

    #[test]
    fn batches_are_put_in_order() {
        // In order, rotated, two runs merged, anything else: always sorted.
        let mut scratch = Vec::new();
        let mut seed = 7u64;
        for len in 0..40usize {
            for kind in 0..5 {
                let mut v: Vec<usize> = (0..len).map(|i| i * 3).collect();
                let cut = if len == 0 { 0 } else { (seed as usize) % len };
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                match kind {
                    1 => v.rotate_left(cut),
                    2 => {
                        // Two ascending runs: every other element, then the rest.
                        let (a, b): (Vec<usize>, Vec<usize>) = v.iter().partition(|&&x| x % 2 == 0);
                        v = a.into_iter().chain(b).collect();
                    }
                    3 => v.reverse(),
                    4 => {
                        // Several ascending runs: by residue mod 5.
                        let mut w = Vec::new();
                        for m in 0..5 {
                            w.extend(v.iter().filter(|&&x| x % 5 == m));
                        }
                        v = w;
                    }
                    _ => {}
                }
                let mut want = v.clone();
                want.sort_unstable();
                in_order(&mut v, &mut scratch);
                assert_eq!(v, want, "len {len} kind {kind}");
            }
        }
    }

    #[test]
    fn all_reduce_check_reads_every_slot() {
        // Every rank given every chunk's sum passes, in memory order (the straight pass over
        // whole blocks) and rank by rank; any one slot wrong fails both; the initial values
        // are those `initial` gives, held or not as the bits say.
        for (n, chunks) in [(1, 1), (3, 3), (4, 8), (5, 7), (4, 2)] {
            let mut bufs = initial_buffers(Kind::AllReduce, n, chunks);
            for r in 0..n {
                for c in 0..chunks as u32 {
                    assert_eq!(bufs.get(r, c), Some(initial(r, c)), "{n} {chunks} {r} {c}");
                }
                assert_eq!(bufs.get(r, chunks.div_ceil(n) as u32 * n as u32), None);
            }
            let sum = |c: u32| (0..n).fold(0u64, |a, r| a.wrapping_add(initial(r, c)));
            for r in 0..n {
                for c in 0..chunks as u32 {
                    *bufs.slot(r, c) = sum(c);
                }
            }
            for order in [true, false] {
                assert!(check_in(Kind::AllReduce, n, chunks, &bufs, order).is_ok());
            }
            for r in 0..n {
                for c in 0..chunks as u32 {
                    *bufs.slot(r, c) += 1;
                    for order in [true, false] {
                        let e = check_in(Kind::AllReduce, n, chunks, &bufs, order);
                        assert!(e.is_err(), "{n} {chunks} {r} {c} {order}");
                    }
                    *bufs.slot(r, c) -= 1;
                }
            }
        }
    }

    #[test]
    fn step_flight_gives_back_what_went_in() {
        // Against a map: steps far apart (two rings), transfers landing out of order, steps
        // opened again after they emptied.
        let n = 5;
        let mut f = StepFlight::new(n);
        let mut reference = HashMap::new();
        let mut sent = Vec::new();
        for b in [0, 7, 1, 8, 0, 2] {
            for r in (0..n).rev() {
                let tag = b * n + r;
                if reference.contains_key(&tag) {
                    continue;
                }
                f.insert(b, r, tag * 10);
                reference.insert(tag, tag * 10);
                sent.push(tag);
            }
            // Land every other one sent so far.
            let mut k = 0;
            sent.retain(|&tag| {
                k += 1;
                if k % 2 == 0 {
                    let v = reference.remove(&tag);
                    assert_eq!(f.remove(tag), v.map(|v| (tag / n, tag % n, v)));
                    return false;
                }
                true
            });
        }
        for tag in sent {
            let v = reference.remove(&tag);
            assert_eq!(f.remove(tag), v.map(|v| (tag / n, tag % n, v)));
            assert_eq!(f.remove(tag), None);
        }
        assert!(f.open.is_empty());
        assert_eq!(f.remove(3), None);
    }

    #[test]
    fn memory_order_walks_the_dense_slots_in_order() {
        for (n, chunks) in [(1, 1), (3, 3), (4, 8), (5, 7), (16, 16)] {
            let mut seen = Vec::new();
            let _ = in_memory_order(n, chunks, &mut |k, r, c| {
                assert_eq!(k, dense_index(n, r, c), "{n} {chunks} {r} {c}");
                seen.push((r, c));
                Ok(())
            });
            // Every (rank, chunk) once, slots increasing.
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), n * chunks);
        }
    }
}
