//! A training step as a validation case names it.

use crate::machine::Machine;
use crate::{
    Config, Mapping, Parallel, Partition, Remat, StepReport, TrainError, Transformer, analytic,
    measured,
};

/// A training step as a validation case names it (`[case.train]`).
#[derive(Debug, Clone, PartialEq)]
pub struct TrainCase {
    /// The model.
    pub model: Transformer,
    /// The slice.
    pub system: podsim_system::SystemSpec,
    /// The partition spec.
    pub parallel: Parallel,
    /// 1D/2D activation/weight.
    pub partition: Partition,
    /// The axis order (`None`: the best of all orders, closed form).
    pub mapping: Option<Mapping>,
    /// Global batch (`None`: the model's).
    pub batch: Option<u64>,
    /// Microbatches (`None`: the fastest that fits, closed form).
    pub microbatches: Option<u64>,
    /// Rematerialisation.
    pub remat: Remat,
    /// Timed on the flow model (else closed form).
    pub flow: bool,
    /// How far the weights' state is sharded over the data axis.
    pub shard: crate::Sharding,
    /// Megatron-LM's sequence parallelism inside the tensor-parallel group.
    pub sequence_parallel: bool,
    /// Interleaved pipeline stages per pipeline rank (1: plain 1F1B).
    pub virtual_stages: u64,
}

impl TrainCase {
    /// The step it names.
    pub fn step(&self) -> Result<StepReport, TrainError> {
        let net = self.system.build().map_err(|e| TrainError::Build {
            system: self.system.name.clone(),
            why: e.why,
        })?;
        let m = Machine::for_system(&self.system, &net)?;
        let batch = self
            .batch
            .or(self.model.batch)
            .ok_or_else(|| TrainError::NoBatch {
                model: self.model.name.clone(),
            })?;
        let base = Config {
            parallel: self.parallel,
            partition: self.partition,
            mapping: self.mapping.unwrap_or(Mapping::DEFAULT),
            batch,
            microbatches: self.microbatches.unwrap_or(1),
            remat: self.remat,
            shard: self.shard,
            sequence_parallel: self.sequence_parallel,
            virtual_stages: self.virtual_stages,
            expert: 1,
        };
        let c = crate::choose(
            &self.model,
            &m,
            &base,
            crate::Choose {
                mapping: self.mapping.is_none(),
                microbatches: self.microbatches.is_none(),
            },
        )?;
        if self.flow {
            let mut mk = || podsim_system::flow_model(&net);
            measured(&self.model, &m, &net, &c, &mut mk)
        } else {
            analytic(&self.model, &m, &c)
        }
    }
}
