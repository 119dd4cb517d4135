//! The closed-form times of a layer's ops on one chip.

use podsim_collective::Kind;

use crate::layer::{Op, Span};
use crate::{Axis, Config, ELEM, Machine, TrainError, Transformer};

/// The time of `op` on one chip, and whether it is communication.
pub(crate) struct Timer<'a> {
    pub(crate) t: &'a Transformer,
    pub(crate) m: &'a Machine,
    pub(crate) spans: [Span; 6],
    /// Whether the layer's weight shard is read from CMEM.
    pub(crate) cmem_weights: bool,
}

/// Whether CMEM holds a layer's weights for `c`: CMEM is on and the weight shard the GEMMs read
/// (after any gather) fits in half of it, the other half left to activations; for an MoE model,
/// the larger of a dense layer's and an MoE layer's (its attention, router and the experts a
/// chip holds).
pub(crate) fn cmem_holds(t: &Transformer, m: &Machine, c: &Config) -> bool {
    let mut layer = t.layer_params();
    if let Some(moe) = &t.moe {
        let local = (moe.experts / c.expert.max(1)) as f64;
        layer = layer.max(t.attention_params() + t.router_params() + local * t.expert_params());
    }
    let shard = layer / c.parallel.of(Axis::Model2) as f64 * ELEM;
    m.cmem_on && shard <= m.cmem_bytes as f64 / 2.0
}

impl Timer<'_> {
    /// A GEMM's time: the GEMM model's, or its operands' and result's traffic where that is
    /// longer; a weight operand comes from CMEM when the layer's weights are held there.
    pub(crate) fn gemm(&self, m: u64, n: u64, k: u64, weight: bool) -> Result<f64, TrainError> {
        let compute = self.streaming(m, n, k)?;
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

    /// The time a GEMM streams through the matrix units (the GEMM model's, whatever its
    /// traffic): what the units draw their power for.
    pub(crate) fn streaming(&self, m: u64, n: u64, k: u64) -> Result<f64, TrainError> {
        Ok(self
            .m
            .chip
            .arrays
            .gemm_time(m, n, k, &self.t.format)
            .map_err(TrainError::Gemm)?
            .as_secs_f64())
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
        if kind == Kind::AllToAll {
            return self.all_to_all(span, bytes);
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

    /// A direct all-to-all of `bytes` per rank (an equal share to every rank of the group) over
    /// the chips of `span`, in closed form: every dimension's links carry their traffic at once,
    /// so the time is the most loaded link's bytes over its rate, plus the latency of the
    /// longest route. Under minimal routing of a regular torus or mesh, the group's f chips
    /// along a dimension (s apart) exchange B/f with each other; summed over the group, a
    /// ring that closes through the wraparound (f s = the dimension, which wraps) puts
    /// B x D(f) / (2 f) on each of its directed links, D(f) = the sum over offsets j of
    /// min(j, f - j) (f^2/4 for even f; B f/8); a line (the ring does not close) B x
    /// floor(f^2/4) / f on its middle links; the s groups interleaved along the dimension
    /// share each link (s times the load), and through switches each chip's own link carries
    /// its (f - 1)/f x B. The longest route crosses floor(f/2) (ring) or f - 1 (line) steps
    /// of s hops per dimension. It balances ties and sees no twist: on a twisted torus the
    /// flow model's minimal routes are shorter, which this does not count.
    fn all_to_all(&self, span: Span, bytes: f64) -> f64 {
        let mut load: f64 = 0.0;
        let mut latency = 0.0;
        for d in 0..3 {
            let (f, stride) = span.parts[d];
            if f <= 1 {
                continue;
            }
            let beta = self.m.dim_bytes_per_s[d];
            let alpha = self.m.dim_latency_s[d];
            let ff = f as f64;
            let (per_link, steps) = if self.m.switched[d] {
                ((ff - 1.0) / ff * bytes, 1.0)
            } else if f * stride == u64::from(self.m.dims[d]) && self.m.wrap[d] {
                let ring: u64 = (0..f).map(|j| j.min(f - j)).sum();
                (
                    stride as f64 * bytes * ring as f64 / (2.0 * ff),
                    (f / 2) as f64 * stride as f64,
                )
            } else {
                (
                    stride as f64 * bytes * (f * f / 4) as f64 / ff,
                    (f - 1) as f64 * stride as f64,
                )
            };
            load = load.max(per_link / beta);
            latency += steps * alpha;
        }
        load + latency
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
        let (work, comm, hidden) = self.pass_parts(ops)?;
        Ok((work, comm + (hidden - work - comm).max(0.0)))
    }

    /// The exposed communication of a layer's forward pass and of its backward pass, each
    /// as the flow fidelity measures it ([`crate::flow::flow_layer`]): the forward pass
    /// alone, then the whole layer less the forward's (at least 0). In the layer the backward
    /// pass's serial ops follow the forward's without waiting for its overlapped collectives,
    /// which start with the forward pass and may run on into the backward; the backward's
    /// start with the backward pass. Contention-free, the layer takes
    /// max(Sf + Sb, Hf, Sf + Hb) (S: a pass's serial work and communication, H: its
    /// overlapped collectives), so a forward collective that outlasts the forward pass hides
    /// behind the backward's work as it does on the flow model.
    pub(crate) fn layer(&self, forward: &[Op], backward: &[Op]) -> Result<(f64, f64), TrainError> {
        Ok(layer_exposure(
            self.pass_parts(forward)?,
            self.pass_parts(backward)?,
        ))
    }

    /// (chip work, serial communication, overlapped communication) of a list of ops.
    fn pass_parts(&self, ops: &[Op]) -> Result<(f64, f64, f64), TrainError> {
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
        Ok((work, comm, hidden))
    }
}

/// [`Timer::layer`] on the (work, serial communication, overlapped communication) of the
/// forward and the backward pass.
fn layer_exposure((wf, cf, hf): (f64, f64, f64), (wb, cb, hb): (f64, f64, f64)) -> (f64, f64) {
    let (sf, sb) = (wf + cf, wb + cb);
    let alone = sf.max(hf);
    let layer = (sf + sb).max(hf).max(sf + hb);
    (alone - wf, (layer - alone - wb).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::layer_exposure;

    #[test]
    fn a_forward_collective_that_outlasts_its_pass_hides_behind_the_backward() {
        // Forward: 1 s of work, 3 s of overlapped all-gathers; backward: 2 s of work, 1 s of
        // overlapped collectives. Alone the forward pass takes max(1, 3) = 3 s: 2 s exposed.
        // The layer takes max(1 + 2, 3, 1 + 1) = 3 s against 3 s of work: nothing exposed in
        // all, so the backward's share is max(0, 3 - 3 - 2) = 0. Pass by pass (the closed
        // form before) it was 2 s + max(0, 1 - 2) = 2 s, which the flow model undercut.
        assert_eq!(layer_exposure((1.0, 0.0, 3.0), (2.0, 0.0, 1.0)), (2.0, 0.0));
        // Collectives that fit in their passes: nothing exposed; serial communication adds:
        // forward 1 s work + 0.5 s serial, backward 2 s work + 0.25 s serial and 1 s overlapped.
        assert_eq!(
            layer_exposure((1.0, 0.5, 0.0), (2.0, 0.25, 1.0)),
            (0.5, 0.25)
        );
        // A backward collective longer than the backward pass shows: 1.5 + max(2, 3) = 4.5 s
        // of layer, 3 s of work, 0.5 s exposed forward, 1 s backward.
        assert_eq!(layer_exposure((1.0, 0.5, 0.0), (2.0, 0.0, 3.0)), (0.5, 1.0));
    }
}
