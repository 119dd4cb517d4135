//! A Tofu node's communication resources (tofu-interconnect-d.txt section IV.D, Table II) and
//! the placement of processes on them.
//!
//! A node has CMGs (core memory groups, the NUMA domains), TNIs (Tofu network interfaces, each
//! driving one simultaneous transfer), CQs (control queues: a process posts its RDMA
//! descriptors to a CQ of a TNI), BCHs (barrier channels: a barrier's start-and-end points,
//! one per TNI per communicator) and BGs (barrier gates: the relay points of a barrier tree).
//! On TofuD two of the four CMGs are far from the TNIs (Fig. 1): a put between far CMGs at
//! both ends costs about 0.05 us more (section V.B).
//!
//! Placement: each process names its CMG and how many CQs and BCHs it needs. CQs are handed
//! out round-robin over the TNIs (so a process's transfers use as many interfaces as it has
//! CQs); a process's BCHs come from different TNIs, as section V.E recommends for MPI (one BCH
//! per process, each from a different TNI, for up to six processes). Running out of a resource
//! is an error that says which resource, on which TNI, and how many are left.

use podsim_topology::TofuGeneration;

/// A node's resources (Table II).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeResources {
    /// The generation.
    pub generation: TofuGeneration,
    /// Compute cores (Tofu: 8 on the K computer, 16 on FX10; podsim takes the K computer's).
    pub cores: u32,
    /// Core memory groups.
    pub cmgs: u32,
    /// CMGs far from the TNIs (TofuD: two of four, Fig. 1).
    pub far_cmgs: u32,
    /// Network interfaces.
    pub tnis: u32,
    /// Control queues per TNI (Table II's per-node count over the TNIs).
    pub cqs_per_tni: u32,
    /// Control queues per TNI the system keeps (Tofu: one of three).
    pub system_cqs_per_tni: u32,
    /// Barrier channels per node.
    pub bchs: u32,
    /// Barrier gates per node.
    pub bgs: u32,
    /// TNIs that carry the Tofu barrier: TNI 0 alone on Tofu and Tofu2 (section III: "only on
    /// TNI number 0"; Tofu2 did not change the barrier), every TNI on TofuD (section IV.D).
    pub barrier_tnis: u32,
}

impl NodeResources {
    /// Table II's column for `generation`.
    pub fn of(generation: TofuGeneration) -> NodeResources {
        match generation {
            TofuGeneration::Tofu => NodeResources {
                generation,
                cores: 8,
                cmgs: 1,
                far_cmgs: 0,
                tnis: 4,
                cqs_per_tni: 3,
                system_cqs_per_tni: 1,
                bchs: 8,
                bgs: 64,
                barrier_tnis: 1,
            },
            TofuGeneration::Tofu2 => NodeResources {
                generation,
                cores: 32,
                cmgs: 2,
                far_cmgs: 0,
                tnis: 4,
                cqs_per_tni: 12,
                system_cqs_per_tni: 0,
                bchs: 8,
                bgs: 64,
                barrier_tnis: 1,
            },
            TofuGeneration::TofuD => NodeResources {
                generation,
                cores: 48,
                cmgs: 4,
                far_cmgs: 2,
                tnis: 6,
                cqs_per_tni: 12,
                system_cqs_per_tni: 0,
                bchs: 96,
                bgs: 288,
                barrier_tnis: 6,
            },
        }
    }

    /// Control queues per node.
    pub fn cqs(&self) -> u32 {
        self.tnis * self.cqs_per_tni
    }

    /// BCHs per barrier TNI.
    pub fn bchs_per_tni(&self) -> u32 {
        self.bchs / self.barrier_tnis
    }

    /// BGs per barrier TNI.
    pub fn bgs_per_tni(&self) -> u32 {
        self.bgs / self.barrier_tnis
    }

    /// Whether CMG `cmg` is far from the TNIs (on TofuD, CMGs 2 and 3: an assumption about
    /// the numbering; the paper says two of the four are far).
    pub fn is_far(&self, cmg: u32) -> bool {
        cmg >= self.cmgs - self.far_cmgs
    }
}

/// One of Table II's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// Compute cores.
    Cores,
    /// Core memory groups.
    Cmgs,
    /// Network interfaces.
    Tnis,
    /// Control queues per node.
    Cqs,
    /// Barrier channels per node.
    Bchs,
    /// Barrier gates per node.
    Bgs,
}

impl Resource {
    /// Every row, with its name in validation files.
    pub const ALL: [(&'static str, Resource); 6] = [
        ("cores", Resource::Cores),
        ("cmgs", Resource::Cmgs),
        ("tnis", Resource::Tnis),
        ("cqs", Resource::Cqs),
        ("bchs", Resource::Bchs),
        ("bgs", Resource::Bgs),
    ];
    /// From its name.
    pub fn parse(s: &str) -> Option<Resource> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, r)| *r)
    }
    /// The count on a node of `generation`.
    pub fn count(self, generation: TofuGeneration) -> u32 {
        let r = NodeResources::of(generation);
        match self {
            Resource::Cores => r.cores,
            Resource::Cmgs => r.cmgs,
            Resource::Tnis => r.tnis,
            Resource::Cqs => r.cqs(),
            Resource::Bchs => r.bchs,
            Resource::Bgs => r.bgs,
        }
    }
}

/// What a process asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessRequest {
    /// The CMG it runs on.
    pub cmg: u32,
    /// Control queues it needs.
    pub cqs: u32,
    /// Barrier channels it needs.
    pub bchs: u32,
}

/// What a process got: (TNI, index on that TNI) pairs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Placement {
    /// Its CMG.
    pub cmg: u32,
    /// Whether that CMG is far from the TNIs.
    pub far: bool,
    /// Control queues.
    pub cqs: Vec<(u32, u32)>,
    /// Barrier channels.
    pub bchs: Vec<(u32, u32)>,
}

/// Why processes cannot be placed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlacementError {
    /// No such CMG.
    #[error("process {process}: CMG {cmg} does not exist ({generation} has {cmgs} CMGs per node)")]
    NoCmg {
        /// The process.
        process: usize,
        /// The CMG asked for.
        cmg: u32,
        /// The generation.
        generation: TofuGeneration,
        /// Its CMGs.
        cmgs: u32,
    },
    /// Out of a resource.
    #[error(
        "process {process}: out of {resource}: it needs {needed}, {free} are left of the node's {total} ({per_tni} per TNI on {tnis} TNIs{system})"
    )]
    Exhausted {
        /// The process.
        process: usize,
        /// `CQs` or `BCHs`.
        resource: &'static str,
        /// What it asked for.
        needed: u32,
        /// What was left.
        free: u32,
        /// The node's total for users.
        total: u32,
        /// Per TNI, for users.
        per_tni: u32,
        /// TNIs.
        tnis: u32,
        /// A note on the system's share.
        system: &'static str,
    },
    /// More BCHs for one process than TNIs (they must come from different TNIs).
    #[error(
        "process {process}: {needed} BCHs from different TNIs, but the barrier is on {tnis} TNIs of this node (section V.E: share a BCH among processes through memory instead)"
    )]
    BchsPerProcess {
        /// The process.
        process: usize,
        /// What it asked for.
        needed: u32,
        /// TNIs.
        tnis: u32,
    },
}

/// Place `requests` on a node of `generation`, in order.
pub fn place(
    generation: TofuGeneration,
    requests: &[ProcessRequest],
) -> Result<Vec<Placement>, PlacementError> {
    let r = NodeResources::of(generation);
    let user_cqs = r.cqs_per_tni - r.system_cqs_per_tni;
    let mut cq_used = vec![0u32; r.tnis as usize];
    let mut bch_used = vec![0u32; r.tnis as usize];
    let mut next_tni = 0u32;
    let mut out = Vec::new();
    for (p, q) in requests.iter().enumerate() {
        if q.cmg >= r.cmgs {
            return Err(PlacementError::NoCmg {
                process: p,
                cmg: q.cmg,
                generation,
                cmgs: r.cmgs,
            });
        }
        let free_cqs: u32 = cq_used.iter().map(|&u| user_cqs - u).sum();
        if q.cqs > free_cqs {
            return Err(PlacementError::Exhausted {
                process: p,
                resource: "CQs",
                needed: q.cqs,
                free: free_cqs,
                total: user_cqs * r.tnis,
                per_tni: user_cqs,
                tnis: r.tnis,
                system: if r.system_cqs_per_tni > 0 {
                    ", one more per TNI kept for the system"
                } else {
                    ""
                },
            });
        }
        if q.bchs > r.barrier_tnis {
            return Err(PlacementError::BchsPerProcess {
                process: p,
                needed: q.bchs,
                tnis: r.barrier_tnis,
            });
        }
        // CQs round-robin over the TNIs that have one left.
        let mut cqs = Vec::new();
        while cqs.len() < q.cqs as usize {
            let t = next_tni % r.tnis;
            next_tni += 1;
            if cq_used[t as usize] < user_cqs {
                cqs.push((t, cq_used[t as usize]));
                cq_used[t as usize] += 1;
            }
        }
        // BCHs from different TNIs, the least used first.
        let mut order: Vec<u32> = (0..r.barrier_tnis).collect();
        order.sort_by_key(|&t| (bch_used[t as usize], t));
        let usable: Vec<u32> = order
            .into_iter()
            .filter(|&t| bch_used[t as usize] < r.bchs_per_tni())
            .take(q.bchs as usize)
            .collect();
        if usable.len() < q.bchs as usize {
            let free: u32 = bch_used[..r.barrier_tnis as usize]
                .iter()
                .map(|&u| r.bchs_per_tni() - u)
                .sum();
            return Err(PlacementError::Exhausted {
                process: p,
                resource: "BCHs",
                needed: q.bchs,
                free,
                total: r.bchs,
                per_tni: r.bchs_per_tni(),
                tnis: r.barrier_tnis,
                system: "",
            });
        }
        let bchs = usable
            .iter()
            .map(|&t| {
                let i = bch_used[t as usize];
                bch_used[t as usize] += 1;
                (t, i)
            })
            .collect();
        out.push(Placement {
            cmg: q.cmg,
            far: r.is_far(q.cmg),
            cqs,
            bchs,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table II's counts are typed in (validation/tofu-resources.toml compares them with the
    /// table, as calibrated cases); what is checked here are the relations section IV.D states
    /// in words, which the typed counts must obey: "the number of TNIs per node increased by
    /// 1.5 times from Tofu2", "the number of CQs per TNI remained constant at 12", "In Tofu2,
    /// there was no change in the Tofu barrier", "the Tofu barrier becomes available on all
    /// TNIs in TofuD" so that each CMG gets a BCH from a different TNI, and "The ratio of the
    /// BCH to BG increased from 1:8 to 1:3"; and Fig. 1's node, whose TNIs sit by two of its
    /// four CMGs (the other two far).
    #[test]
    fn the_counts_obey_section_iv_d() {
        let [t1, t2, td] = [
            TofuGeneration::Tofu,
            TofuGeneration::Tofu2,
            TofuGeneration::TofuD,
        ]
        .map(NodeResources::of);
        assert_eq!(2 * td.tnis, 3 * t2.tnis);
        // Constant from Tofu2 to TofuD (Tofu had 3 a TNI: 12 a node).
        for r in [t2, td] {
            assert_eq!(r.cqs(), 12 * r.tnis);
        }
        assert_eq!((t2.bchs, t2.bgs), (t1.bchs, t1.bgs));
        for r in [t1, t2] {
            assert_eq!(r.bgs, 8 * r.bchs);
        }
        assert_eq!(td.bgs, 3 * td.bchs);
        assert_eq!(td.bchs_per_tni() * td.tnis, td.bchs);
        assert_eq!(td.bgs_per_tni() * td.tnis, td.bgs);
        assert!(td.tnis >= td.cmgs);
        assert!(!td.is_far(0) && !td.is_far(1) && td.is_far(2) && td.is_far(3));
    }

    #[test]
    fn six_processes_get_a_bch_each_from_different_tnis() {
        // Section V.E: up to six processes on a TofuD node, one BCH each from a different TNI.
        let req = ProcessRequest {
            cmg: 0,
            cqs: 1,
            bchs: 1,
        };
        let p = place(TofuGeneration::TofuD, &[req; 6]).unwrap();
        let mut tnis: Vec<u32> = p.iter().map(|x| x.bchs[0].0).collect();
        tnis.sort_unstable();
        assert_eq!(tnis, vec![0, 1, 2, 3, 4, 5]);
        // And their CQs spread over the six TNIs.
        let mut cq_tnis: Vec<u32> = p.iter().map(|x| x.cqs[0].0).collect();
        cq_tnis.sort_unstable();
        assert_eq!(cq_tnis, vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn running_out_says_which_resource() {
        // Tofu: 3 CQs per TNI, one for the system: 8 for users on 4 TNIs.
        let req = ProcessRequest {
            cmg: 0,
            cqs: 3,
            bchs: 0,
        };
        let e = place(TofuGeneration::Tofu, &[req, req, req]).unwrap_err();
        let s = e.to_string();
        assert!(
            s.contains("process 2: out of CQs: it needs 3, 2 are left of the node's 8"),
            "{s}"
        );
        assert!(s.contains("kept for the system"), "{s}");
        // TofuD: 16 BCHs per TNI, 96 per node; 16 processes of 6 BCHs use them all.
        let req = ProcessRequest {
            cmg: 1,
            cqs: 0,
            bchs: 6,
        };
        assert!(place(TofuGeneration::TofuD, &[req; 16]).is_ok());
        let e = place(TofuGeneration::TofuD, &[req; 17]).unwrap_err();
        assert!(
            e.to_string()
                .contains("out of BCHs: it needs 6, 0 are left of the node's 96")
        );
        let e = place(
            TofuGeneration::TofuD,
            &[ProcessRequest {
                cmg: 4,
                cqs: 1,
                bchs: 1,
            }],
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("CMG 4 does not exist (TofuD has 4 CMGs")
        );
        let e = place(
            TofuGeneration::Tofu2,
            &[ProcessRequest {
                cmg: 0,
                cqs: 1,
                bchs: 5,
            }],
        )
        .unwrap_err();
        assert!(e.to_string().contains("5 BCHs from different TNIs"));
        // Tofu: the barrier is on TNI 0 alone, 8 BCHs (section III): eight communicators.
        let one = ProcessRequest {
            cmg: 0,
            cqs: 0,
            bchs: 1,
        };
        let p = place(TofuGeneration::Tofu, &[one; 8]).unwrap();
        assert!(p.iter().all(|x| x.bchs[0].0 == 0));
        let e = place(TofuGeneration::Tofu, &[one; 9]).unwrap_err();
        assert!(
            e.to_string().contains(
                "out of BCHs: it needs 1, 0 are left of the node's 8 (8 per TNI on 1 TNIs"
            ),
            "{e}"
        );
    }
}
