//! The closed-form times of a layer's ops on one chip.

use podsim_collective::Kind;

use crate::layer::{Op, Span};
use crate::{Axis, Config, ELEM, Machine, TrainError, Transformer};

/// The time of `op` on one chip, and whether it is communication.
pub(crate) struct Timer<'a> {
    pub(crate) t: &'a Transformer,
    pub(crate) m: &'a Machine,
    pub(crate) spans: [Span; 4],
    /// Whether the layer's weight shard is read from CMEM.
    pub(crate) cmem_weights: bool,
}

/// Whether CMEM holds a layer's weights for `c`: CMEM is on and the weight shard the GEMMs read
/// (after any gather) fits in half of it, the other half left to activations.
pub(crate) fn cmem_holds(t: &Transformer, m: &Machine, c: &Config) -> bool {
    let shard = t.layer_params() / c.parallel.of(Axis::Model2) as f64 * ELEM;
    m.cmem_on && shard <= m.cmem_bytes as f64 / 2.0
}

impl Timer<'_> {
    /// A GEMM's time: the GEMM model's, or its operands' and result's traffic where that is
    /// longer; a weight operand comes from CMEM when the layer's weights are held there.
    pub(crate) fn gemm(&self, m: u64, n: u64, k: u64, weight: bool) -> Result<f64, TrainError> {
        let compute = self
            .m
            .chip
            .arrays
            .gemm_time(m, n, k, &self.t.format)
            .map_err(TrainError::Gemm)?
            .as_secs_f64();
        let hbm = self.m.chip.memory.bytes_per_s() as f64;
        let streamed = (m * k + m * n) as f64 * ELEM;
        let w = (k * n) as f64 * ELEM;
        let memory = if weight && self.cmem_weights {
            streamed / hbm + w / self.m.cmem_bytes_per_s
        } else {
            (streamed + w) / hbm
        };
        Ok(compute.max(memory))
    }

    pub(crate) fn memory(&self, bytes: f64) -> f64 {
        bytes / self.m.chip.memory.bytes_per_s() as f64
    }

    /// A contention-free ring collective along each dimension the axis spans: per dimension,
    /// (f - 1)/f of the data that reaches it over the links the ring has there (2 for a
    /// bidirectional all-reduce ring closing through a wraparound, 1 for the unidirectional
    /// rings and for a ring on a line, whose closing edge runs back along it; divided by the
    /// stride when interleaved groups share the links), plus a step latency per ring step.
    pub(crate) fn collective(&self, axis: Axis, kind: Kind, bytes: f64) -> f64 {
        let span = self.spans[axis.index()];
        if span.size <= 1 {
            return 0.0;
        }
        let dims_spanned = span.parts.iter().filter(|p| p.0 > 1).count();
        let mut time = 0.0;
        let mut data = bytes;
        for d in 0..3 {
            let (f, stride) = span.parts[d];
            if f <= 1 {
                continue;
            }
            let beta = self.m.dim_bytes_per_s[d];
            let alpha = self.m.dim_latency_s[d];
            let full = f * stride == u64::from(self.m.dims[d]) && self.m.wrap[d];
            let bidirectional = kind == Kind::AllReduce && dims_spanned == 1;
            // Through switches each chip's link carries one ring a step, whatever the stride.
            let switched = self.m.switched[d];
            let links = match (full, stride) {
                _ if switched => 1.0,
                (true, 1) if bidirectional => 2.0,
                (true, s) if bidirectional => 2.0 / s as f64,
                (_, s) => 1.0 / s as f64,
            };
            let fr = (f - 1) as f64 / f as f64;
            let steps = if switched {
                (f - 1) as f64
            } else {
                (f - 1) as f64 * (stride as f64).max(1.0)
            };
            let phase = fr * data / (links * beta) + steps * alpha;
            time += match kind {
                Kind::AllReduce => 2.0 * phase,
                _ => phase,
            };
            // Dimension-wise: the next dimension works on this one's share (an all-gather
            // moves the same amounts, in the reverse order).
            data /= f as f64;
        }
        time
    }

    pub(crate) fn op(&self, op: &Op) -> Result<(f64, bool), TrainError> {
        Ok(match op {
            Op::Gemm {
                m,
                n,
                k,
                count,
                weight,
                ..
            } => (*count as f64 * self.gemm(*m, *n, *k, *weight)?, false),
            Op::Memory { bytes, .. } => (self.memory(*bytes), false),
            Op::Coll {
                axis, kind, bytes, ..
            } => (self.collective(*axis, *kind, *bytes), true),
        })
    }

    /// (chip work, exposed communication) of a list of ops: serial ops add up; overlapped
    /// collectives hide behind the rest and show only where they take longer.
    pub(crate) fn pass(&self, ops: &[Op]) -> Result<(f64, f64), TrainError> {
        let (mut work, mut comm, mut hidden) = (0.0, 0.0, 0.0);
        for o in ops {
            let (time, is_comm) = self.op(o)?;
            match o {
                Op::Coll {
                    overlapped: true, ..
                } => hidden += time,
                _ if is_comm => comm += time,
                _ => work += time,
            }
        }
        Ok((work, comm + (hidden - work - comm).max(0.0)))
    }
}
