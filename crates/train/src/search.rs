//! The search of Table 3: slice shapes, partition specs, options and mappings, in closed form
//! and then on the flow model.

use podsim_net::NetworkModel;
use podsim_report::sweep_file::SweepFileError;
use podsim_system::workload::ChipSpec;
use podsim_topology::Network;

use crate::layer::{Span, spans};
use crate::{
    Config, LayerTimes, Machine, Mapping, Parallel, Partition, Prepared, Remat, Sharding, Split,
    StepReport, TrainError, Transformer, flow_layers, microbatch_choices,
};

/// A slice the OCS can build for a search: chips along x <= y <= z, each a multiple of 4
/// (section 2.5), twisted or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SliceShape {
    /// Chips along x, y, z.
    pub dims: [u32; 3],
    /// Whether the wraparound is twisted.
    pub twisted: bool,
}

impl SliceShape {
    /// Every slice of `chips` chips made of 4x4x4 blocks, twisted too where twistable
    /// (k x k x 2k, k x 2k x 2k).
    pub fn all(chips: u64) -> Vec<SliceShape> {
        let mut out = Vec::new();
        if !chips.is_multiple_of(64) {
            return out;
        }
        let mut a = 4u64;
        while a * a * a <= chips {
            let mut b = a;
            while a * b * b <= chips {
                if chips.is_multiple_of(a * b) {
                    let c = chips / (a * b);
                    if c >= b && c.is_multiple_of(4) && c <= 1 << 16 {
                        let dims = [a as u32, b as u32, c as u32];
                        out.push(SliceShape {
                            dims,
                            twisted: false,
                        });
                        if (a == b && c == 2 * b) || (b == 2 * a && c == b) {
                            out.push(SliceShape {
                                dims,
                                twisted: true,
                            });
                        }
                    }
                }
                b += 4;
            }
            a += 4;
        }
        out
    }

    /// Its shorthand, `tpuv4:slice=AxBxC[:twisted]`.
    pub fn shorthand(&self) -> String {
        let [a, b, c] = self.dims;
        format!(
            "tpuv4:slice={a}x{b}x{c}{}",
            if self.twisted { ":twisted" } else { "" }
        )
    }

    /// Its network, built from blocks and OCS circuits in an empty pod.
    pub fn network(&self) -> Result<Network, TrainError> {
        let mut pod = podsim_system::tpu_v4::TpuPod::new();
        let id = pod.allocate(self.dims, self.twisted)?;
        pod.slices()
            .find(|s| s.id == id)
            .map(|s| Network::Cube(s.topology.clone()))
            .ok_or(TrainError::SliceLost)
    }
}

/// Every partition spec `[P, D, M1, M2]` of `chips` chips that `t` and `batch` allow.
pub fn parallel_specs(t: &Transformer, chips: u64, batch: u64) -> Vec<Parallel> {
    let divisors = |n: u64| -> Vec<u64> { (1..=n).filter(|k| n.is_multiple_of(*k)).collect() };
    let mut out = Vec::new();
    for p in divisors(chips) {
        if p > t.layers {
            continue;
        }
        for d in divisors(chips / p) {
            for x in divisors(chips / p / d) {
                let y = chips / p / d / x;
                if y > t.heads || !batch.is_multiple_of(d * x) {
                    continue;
                }
                out.push(Parallel([p, d, x, y]));
            }
        }
    }
    out
}

/// Builds a fresh network model for a network (the flow model, for the search's survivors);
/// called from any thread the search's [`FlowRunner`] times survivors on.
pub type ModelFor<'a> = dyn Fn(&Network) -> Result<Box<dyn NetworkModel>, String> + Sync + 'a;

/// One survivor's flow-model layer times, or why it has none.
pub type SurvivorTimes = Result<LayerTimes, TrainError>;

/// How a search's flow pass times its survivors: [`FlowRunner::batch`] of them at a time, in
/// closed-form order, each by `each(i)`, wherever the runner puts them ([`Serial`]: here, one
/// after another; `podsim train --search` under `mpirun`: one per MPI rank). The pass then
/// takes the times in order and stops where the one-at-a-time pass stops, so any batch gives
/// the same result (those timed past the stop are dropped, never kept in the memo).
pub trait FlowRunner {
    /// How many survivors to time at once (at least 1).
    fn batch(&self) -> usize;
    /// `each(i)` for every i below `n`, in order, the same on every rank; the error when the
    /// times could not be gathered.
    fn run(
        &mut self,
        n: usize,
        each: &(dyn Fn(usize) -> SurvivorTimes + Sync),
    ) -> Result<Vec<SurvivorTimes>, TrainError>;
}

/// A [`FlowRunner`] that times one survivor at a time, here.
pub struct Serial;

impl FlowRunner for Serial {
    fn batch(&self) -> usize {
        1
    }
    fn run(
        &mut self,
        n: usize,
        each: &(dyn Fn(usize) -> SurvivorTimes + Sync),
    ) -> Result<Vec<SurvivorTimes>, TrainError> {
        Ok((0..n).map(each).collect())
    }
}

/// What a search found.
#[derive(Debug, Clone)]
pub struct SearchResult {
    /// The best configurations, best first, each with its slice and its step (timed at the
    /// fidelity the search ended with).
    pub results: Vec<(SliceShape, StepReport)>,
    /// Configurations evaluated in closed form.
    pub configurations_evaluated: u64,
    /// Configurations skipped by the compute-only bound before any mapping was tried.
    pub pruned: u64,
    /// Configurations that do not fit in HBM.
    pub over_memory: u64,
    /// Survivors timed on the flow model.
    pub flow_evaluated: u64,
    /// Seconds spent in the closed-form pass.
    pub closed_form_s: f64,
}

/// Search slice shapes, partition specs, 1D/2D options, rematerialisation (full, none,
/// selective), sequence parallelism, virtual stages (1, 2, 4 where valid), microbatches and
/// axis mappings for `t` on `chips` TPU v4 chips at global batch `batch`: every configuration
/// in closed form, skipping those whose compute-only bound cannot beat the K-th best found,
/// then the best (up to `flow_limit`, in closed-form order) on the flow model with
/// `model_for`, until the closed-form figure of the next one (an upper bound on its flow
/// throughput) cannot beat the K-th best measured. Nothing is sharded over data beyond the
/// optimizer state ([`Sharding::None`]; [`search_with`] takes a stage).
pub fn search(
    t: &Transformer,
    chip: &ChipSpec,
    chips: u64,
    batch: u64,
    top: usize,
    flow_limit: usize,
    model_for: &mut ModelFor<'_>,
) -> Result<SearchResult, TrainError> {
    search_with(
        t,
        chip,
        chips,
        batch,
        top,
        flow_limit,
        Sharding::None,
        model_for,
        &mut NoMemo,
    )
}

/// Where a search keeps the layer times the flow model measured, so a search run again (after
/// a kill, say) reuses them instead of measuring again: a key naming the slice and the
/// configuration -> (forward, backward) seconds of one layer.
pub trait FlowMemo {
    /// The times kept for `key` before the search began, if any (what the search puts is for
    /// the next search; a batch's keys are all looked up before any of its times is put).
    fn get(&mut self, key: &str) -> Option<(f64, f64)>;
    /// Keep the times just measured for `key`; the error says why they could not be kept.
    fn put(&mut self, key: &str, times: (f64, f64)) -> Result<(), SweepFileError>;
}

/// A [`FlowMemo`] that keeps nothing.
pub struct NoMemo;

impl FlowMemo for NoMemo {
    fn get(&mut self, _: &str) -> Option<(f64, f64)> {
        None
    }
    fn put(&mut self, _: &str, _: (f64, f64)) -> Result<(), SweepFileError> {
        Ok(())
    }
}

/// [`search`], with the flow pass's layer times kept in (and taken from) `memo`, and data
/// sharding up to `shard`: each configuration takes the least sharded stage up to `shard`
/// that fits in HBM ([`Sharding::Optimizer`] is the same step as [`Sharding::None`] and is
/// not tried apart; the gradients and weights stages only where data > 1), so a search with
/// `shard` at [`Sharding::None`] is the search without sharding, and a larger `shard` prepares
/// at most three stages of a configuration that does not fit, instead of one.
#[allow(clippy::too_many_arguments)]
pub fn search_with(
    t: &Transformer,
    chip: &ChipSpec,
    chips: u64,
    batch: u64,
    top: usize,
    flow_limit: usize,
    shard: Sharding,
    model_for: &mut ModelFor<'_>,
    memo: &mut dyn FlowMemo,
) -> Result<SearchResult, TrainError> {
    search_by(
        t,
        chip,
        chips,
        batch,
        top,
        flow_limit,
        shard,
        model_for,
        memo,
        &mut Serial,
    )
}

/// [`search_with`], its survivors timed by `runner` a batch at a time (the same result with
/// any runner and batch: see [`FlowRunner`]).
#[allow(clippy::too_many_arguments)]
pub fn search_by(
    t: &Transformer,
    chip: &ChipSpec,
    chips: u64,
    batch: u64,
    top: usize,
    flow_limit: usize,
    shard: Sharding,
    model_for: &ModelFor<'_>,
    memo: &mut dyn FlowMemo,
    runner: &mut dyn FlowRunner,
) -> Result<SearchResult, TrainError> {
    let top = top.max(1);
    let shapes = SliceShape::all(chips);
    if shapes.is_empty() {
        return Err(TrainError::NoSlice { chips });
    }
    let mut machines = Vec::new();
    for s in &shapes {
        let net = s.network()?;
        let m = Machine::of(&net, chip.clone())?;
        machines.push((*s, net, m));
    }
    let specs = parallel_specs(t, chips, batch);
    let start = std::time::Instant::now();
    // Candidates kept: more than `top` so the flow pass has survivors to re-rank.
    let mut pass = ClosedForm {
        t,
        machines: &machines,
        mappings: Mapping::all(),
        shard,
        keep: (top * 4).max(flow_limit),
        best: Vec::new(),
        evaluated: 0,
        pruned: 0,
        over: 0,
    };
    for remat in Remat::ALL {
        for partition in Partition::ALL {
            for parallel in &specs {
                for (sequence_parallel, virtual_stages, expert) in schedules(t, parallel, partition)
                {
                    let base = Config {
                        parallel: *parallel,
                        partition,
                        mapping: Mapping::DEFAULT,
                        batch,
                        microbatches: 1,
                        remat,
                        shard: Sharding::None,
                        sequence_parallel,
                        virtual_stages,
                        expert,
                    };
                    for mb in microbatch_choices(&base) {
                        // Megatron-LM's interleaved schedule takes microbatches in multiples
                        // of the pipeline stages.
                        if virtual_stages > 1 && !mb.is_multiple_of(parallel.0[0]) {
                            continue;
                        }
                        pass.config(&Config {
                            microbatches: mb,
                            ..base
                        });
                    }
                }
            }
        }
    }
    let ClosedForm {
        best,
        evaluated,
        pruned,
        over,
        ..
    } = pass;
    let closed_form_s = start.elapsed().as_secs_f64();
    // The flow pass, in closed-form order, a batch of survivors at a time: each stops where
    // the pass one survivor at a time stops (its limit, or a closed-form figure, an upper
    // bound on the flow's, that cannot beat the K-th best measured).
    let mut measured: Vec<(f64, usize, StepReport)> = Vec::new();
    let mut flow_evaluated = 0u64;
    let stops = |measured: &[(f64, usize, StepReport)], flow_evaluated: u64, tp: f64| {
        flow_evaluated as usize >= flow_limit
            || (measured.len() >= top && tp <= measured[top - 1].0)
    };
    let mut next = 0;
    'pass: while next < best.len() {
        if stops(&measured, flow_evaluated, best[next].0) {
            break;
        }
        let take = runner
            .batch()
            .max(1)
            .min(flow_limit - flow_evaluated as usize)
            .min(best.len() - next);
        let cands = &best[next..next + take];
        // The key: the slice and every setting of the configuration (no commas, for CSV).
        let keys: Vec<String> = cands
            .iter()
            .map(|(_, si, r)| {
                format!("{} {:?}", machines[*si].0.shorthand(), r.config).replace(',', ";")
            })
            .collect();
        let moe = t.moe.is_some();
        let kept: Vec<Option<LayerTimes>> = keys.iter().map(|k| memo_get(memo, k, moe)).collect();
        let todo: Vec<usize> = (0..take).filter(|&j| kept[j].is_none()).collect();
        let fresh = if todo.is_empty() {
            Vec::new()
        } else {
            runner.run(todo.len(), &|i| {
                let (_, si, r) = &cands[todo[i]];
                let (_, net, m) = &machines[*si];
                flow_layers(t, m, net, &r.config, &mut || model_for(net))
            })?
        };
        let mut fresh = fresh.into_iter();
        for ((tp, si, r), (key, kept)) in cands.iter().zip(keys.iter().zip(kept)) {
            if stops(&measured, flow_evaluated, *tp) {
                break 'pass;
            }
            let layer = match kept {
                Some(times) => times,
                None => {
                    let times = fresh.next().ok_or_else(|| TrainError::Elsewhere {
                        message: "flow model: a survivor's times are missing".to_string(),
                        input: false,
                    })??;
                    memo_put(memo, key, &times)?;
                    times
                }
            };
            let (_, _, m) = &machines[*si];
            let prep = Prepared::new(t, m, &r.config)?;
            let f = prep.finish(t, m, r.config.mapping, Some(layer))?;
            flow_evaluated += 1;
            let ftp = f.throughput_seqs_per_s;
            let at = measured.partition_point(|b| b.0 >= ftp);
            measured.insert(at, (ftp, *si, f));
        }
        next += take;
    }
    let ranked = if flow_limit == 0 { best } else { measured };
    Ok(SearchResult {
        results: ranked
            .into_iter()
            .take(top)
            .map(|(_, si, r)| (machines[si].0, r))
            .collect(),
        configurations_evaluated: evaluated,
        pruned,
        over_memory: over,
        flow_evaluated,
        closed_form_s,
    })
}

/// The layer times kept for `key`: a dense layer's under the key, an MoE model's MoE layer
/// under `key moe` and its all-to-alls' time under `key all-to-all` (the first of its pair).
fn memo_get(memo: &mut dyn FlowMemo, key: &str, moe: bool) -> Option<LayerTimes> {
    let dense = memo.get(key)?;
    if !moe {
        return Some(LayerTimes { dense, moe: None });
    }
    let (f, b) = memo.get(&format!("{key} moe"))?;
    let (a2a, _) = memo.get(&format!("{key} all-to-all"))?;
    Some(LayerTimes {
        dense,
        moe: Some((f, b, a2a)),
    })
}

/// Keep `times` for `key` as [`memo_get`] reads them.
fn memo_put(memo: &mut dyn FlowMemo, key: &str, times: &LayerTimes) -> Result<(), SweepFileError> {
    memo.put(key, times.dense)?;
    if let Some((f, b, a2a)) = times.moe {
        memo.put(&format!("{key} moe"), (f, b))?;
        memo.put(&format!("{key} all-to-all"), (a2a, 0.0))?;
    }
    Ok(())
}

/// The sequence parallelism, virtual stages and expert axes a search tries for a partition
/// spec: without either; sequence parallel where model2 > 1 and the activations are 1D (2D
/// ones are split over model2 already); 2 and 4 virtual stages where pipeline > 1 and the
/// layers split into pipeline x V equal chunks; for an MoE model, every expert axis that
/// divides data and the experts (1 alone for a dense model).
fn schedules(t: &Transformer, parallel: &Parallel, partition: Partition) -> Vec<(bool, u64, u64)> {
    let [p, d, _, y] = parallel.0;
    let sp_ok = y > 1 && partition.activation == Split::OneD;
    let experts: Vec<u64> = match &t.moe {
        None => vec![1],
        Some(moe) => (1..=d)
            .filter(|e| d.is_multiple_of(*e) && moe.experts.is_multiple_of(*e))
            .collect(),
    };
    let mut out = Vec::new();
    for sp in [false, true] {
        if sp && !sp_ok {
            continue;
        }
        for v in [1, 2, 4] {
            if v == 1 || (p > 1 && t.layers.is_multiple_of(p * v)) {
                for &e in &experts {
                    out.push((sp, v, e));
                }
            }
        }
    }
    out
}

/// The closed-form pass of a search: the candidates kept, (throughput, shape index, report),
/// best first, and the counts.
struct ClosedForm<'a> {
    t: &'a Transformer,
    machines: &'a [(SliceShape, Network, Machine)],
    mappings: Vec<Mapping>,
    /// The most sharding over data a configuration may take.
    shard: Sharding,
    /// How many candidates to keep.
    keep: usize,
    best: Vec<(f64, usize, StepReport)>,
    evaluated: u64,
    pruned: u64,
    over: u64,
}

impl ClosedForm<'_> {
    /// The throughput a candidate must beat to be kept.
    fn floor(&self) -> f64 {
        if self.best.len() < self.keep {
            0.0
        } else {
            self.best[self.best.len() - 1].0
        }
    }

    /// Configuration `c` (sharded over data as little as fits, up to `shard`) on every slice
    /// and every distinct mapping, unless it does not fit or its compute-only bound cannot
    /// beat the floor.
    fn config(&mut self, c: &Config) {
        let (t, machines) = (self.t, self.machines);
        let stages = [Sharding::None, Sharding::Gradients, Sharding::Weights]
            .into_iter()
            .filter(|s| *s <= self.shard && (*s == Sharding::None || c.parallel.0[1] > 1));
        let mut fitting = None;
        let mut prepared = false;
        for s in stages {
            let Ok(prep) = Prepared::new(t, &machines[0].2, &Config { shard: s, ..*c }) else {
                continue;
            };
            prepared = true;
            if prep.fits(&machines[0].2) {
                fitting = Some(prep);
                break;
            }
        }
        if !prepared {
            return;
        }
        let variants = (machines.len() * self.mappings.len()) as u64;
        let Some(prep) = fitting else {
            self.over += variants;
            return;
        };
        if c.batch as f64 / prep.bound_s() <= self.floor() {
            self.pruned += variants;
            return;
        }
        for (si, (_, _, m)) in machines.iter().enumerate() {
            let mut seen: Vec<[Span; 5]> = Vec::new();
            for &mapping in &self.mappings {
                let cm = Config { mapping, ..*c };
                let Ok(sp) = spans(m, &cm) else {
                    continue;
                };
                // Mappings that place every axis alike are one configuration (the expert
                // replicas follow from the data and expert axes).
                let key = [sp[0], sp[1], sp[2], sp[3], sp[4]];
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key);
                self.evaluated += 1;
                let Ok(r) = prep.finish(t, m, mapping, None) else {
                    continue;
                };
                let tp = r.throughput_seqs_per_s;
                if tp > self.floor() {
                    let at = self.best.partition_point(|b| b.0 >= tp);
                    self.best.insert(at, (tp, si, r));
                    self.best.truncate(self.keep);
                }
            }
        }
    }
}
