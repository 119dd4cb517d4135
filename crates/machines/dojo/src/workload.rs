//! The workload's DOJO tasks (`dma` and `barrier` in a workload file, on a DOJO plane:
//! `examples/dojo/tile-step.toml`), as [`MachineTask`]s the generic executor of
//! `podsim_system::workload` runs:
//!
//! * `dma`: `bytes` to each chip of the group from the HBM of the interface processor nearest
//!   it, by the DIP's DMA engine ([`crate::dma`]): the read is rounded up to whole HBM bursts
//!   and sent from the DIP to the node on the network model, where the DIP's injection is
//!   capped at its HBM's rate (800 GB/s) and the packets share the mesh.
//! * `barrier`: a barrier over the group's nodes, in hardware (an ARM/GRANT tree of fan-in
//!   `fan_in` in the routers, [`crate::barrier`]) or in software (a dissemination barrier over
//!   the same mesh): each node waits at its barrier resource for the barrier's latency. A node
//!   is in at most [`crate::barrier::MAX_TREES_PER_NODE`] hardware trees over the whole
//!   workload ([`Claim`]).

use std::any::Any;
use std::sync::Arc;

use podsim_system::workload::{Claim, Job, MachineTask, Resource, Work};
use podsim_topology::{DojoNode, NODE_SRAM, Network, NodeId};
use podsim_units::{Bytes, SimDuration};

use crate::barrier::{MAX_TREES_PER_NODE, build_tree, dissemination_ps, tree_ps};
use crate::dma::BURST_BYTES;

/// A DOJO task of a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DojoTask {
    /// `bytes` to each chip of the group from the HBM of the interface processor nearest it,
    /// by the DIP's DMA engine ([`crate::dma`]): the read queues on the DIP's HBM (64-byte
    /// bursts at 800 GB/s), then the data crosses the network to the node.
    Dma {
        /// Bytes per chip.
        bytes: Bytes,
    },
    /// A barrier over the group's nodes, in hardware (an ARM/GRANT tree of fan-in `fan_in` in
    /// the routers, [`crate::barrier`]) or in software (a dissemination barrier over the same
    /// mesh). At most four hardware trees per node.
    Barrier {
        /// The hardware trees, or the software barrier.
        hardware: bool,
        /// Children per tree node (hardware).
        fan_in: u32,
    },
}

impl DojoTask {
    /// The task as a workload's work ([`Work::Machine`]).
    pub fn work(self) -> Work {
        Work::Machine(Arc::new(self))
    }
}

/// A `dma` task's work: `bytes` to each chip from its nearest DIP ([`DojoTask::Dma`]).
pub fn dma(bytes: Bytes) -> Work {
    DojoTask::Dma { bytes }.work()
}

/// A `barrier` task's work: hardware trees of fan-in `fan_in`, or the software barrier
/// ([`DojoTask::Barrier`]).
pub fn barrier(hardware: bool, fan_in: u32) -> Work {
    DojoTask::Barrier { hardware, fan_in }.work()
}

/// The name of a hardware barrier's claim on its nodes.
const TREES: &str = "barrier trees";

impl MachineTask for DojoTask {
    fn check(&self, net: &Network, _chips: &[u64]) -> Result<(), String> {
        match *self {
            DojoTask::Dma { bytes } => {
                match net {
                    Network::Dojo(d) if d.dips() > 0 => {}
                    _ => {
                        return Err(format!(
                            "DMA streams from DOJO interface processors, and {} has none (dojo:system=RxC has them)",
                            net.shorthand()
                        ));
                    }
                }
                if bytes.0 == 0 || bytes.0 > NODE_SRAM.0 {
                    return Err(format!(
                        "{bytes} per node: a DMA lands in one node's SRAM, 1 byte to {NODE_SRAM}"
                    ));
                }
            }
            DojoTask::Barrier { hardware, fan_in } => {
                if !matches!(net, Network::Dojo(_)) {
                    return Err(format!(
                        "`barrier` runs DOJO's barrier trees, and {} is not a DOJO plane; use collective = \"barrier\"",
                        net.shorthand()
                    ));
                }
                if hardware && fan_in < 2 {
                    return Err(format!("fan_in {fan_in}: at least 2"));
                }
            }
        }
        Ok(())
    }

    fn jobs(&self, net: &Network, chips: &[u64]) -> Result<Vec<Job>, String> {
        match *self {
            DojoTask::Dma { bytes } => {
                let Network::Dojo(d) = net else {
                    return Err("DMA needs a DOJO plane".into());
                };
                // The DMA engine issues every descriptor at once; the reads share the DIP's
                // HBM (its injection into the plane is capped at the HBM's rate) and the
                // packets share the mesh, on the network model.
                let read = bytes.0.div_ceil(BURST_BYTES) * BURST_BYTES;
                Ok(chips
                    .iter()
                    .map(|&c| {
                        let dip = d.nearest_dip(NodeId(c)).unwrap_or(0);
                        Job::Send {
                            from: d.id(DojoNode::Dip(dip)).0,
                            to: c,
                            bytes: read,
                        }
                    })
                    .collect())
            }
            DojoTask::Barrier { hardware, fan_in } => {
                let Network::Dojo(d) = net else {
                    return Err("a barrier tree needs a DOJO plane".into());
                };
                let w = u64::from(d.width());
                let members: Vec<(u32, u32)> = chips
                    .iter()
                    .map(|&c| ((c % w) as u32, (c / w) as u32))
                    .collect();
                let ps = if hardware {
                    tree_ps(d, &build_tree(&members, fan_in))
                } else {
                    dissemination_ps(d, &members).0
                };
                Ok(chips
                    .iter()
                    .map(|&c| Job::Hold {
                        chip: c,
                        resource: Resource::Sync,
                        time: SimDuration::from_ps(ps),
                    })
                    .collect())
            }
        }
    }

    fn communicates(&self) -> bool {
        true
    }

    /// A hardware barrier is a tree on each of its nodes (dojo-microarchitecture.txt, "System
    /// Synchronization": a node belongs to at most four).
    fn claim(&self) -> Option<Claim> {
        match self {
            DojoTask::Barrier { hardware: true, .. } => Some(Claim {
                name: TREES,
                most: MAX_TREES_PER_NODE,
            }),
            _ => None,
        }
    }

    fn claim_refused(&self, chip: u64) -> String {
        format!(
            "chip {chip} would be in a fifth barrier tree; a DOJO node belongs to at most {MAX_TREES_PER_NODE}"
        )
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn same(&self, other: &dyn MachineTask) -> bool {
        other.as_any().downcast_ref::<DojoTask>() == Some(self)
    }
}
