//! `podsim dojo` as library calls: each subcommand's settings, the run, a result that
//! serializes to its `--json` object (through `podsim_report::to_json`) and renders its text.
//!
//! * [`node`]: a kernel through the node's funnel pipeline.
//! * [`barrier`]: hardware barrier trees over synchronisation domains.
//! * [`transfer`]: a push, pull, block or broadcast on the mesh.
//! * [`shortcuts`]: Z-plane shortcuts under mixed load.
//! * [`dma`]: a DIP's DMA descriptor, and a host's upload to its DIPs.
//!
//! Errors name the command-line option a bad value came from ([`StudyError::Setting`]).

pub mod barrier;
pub mod dma;
pub mod node;
pub mod shortcuts;
pub mod transfer;

use podsim_topology::{Dojo, Network};

/// Why a study cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StudyError {
    /// A setting the study cannot take: the option it came from and why.
    #[error("`{key}`: {why}")]
    Setting {
        /// The option, as `podsim dojo` names it (`--to`).
        key: String,
        /// What is wrong with it.
        why: String,
    },
    /// An input file the study cannot take.
    #[error("{file}: {why}")]
    File {
        /// The file.
        file: String,
        /// What is wrong with it.
        why: String,
    },
    /// The run failed (a memory limit): the whole message, with its context.
    #[error("{0}")]
    Run(String),
}

/// A [`StudyError::Setting`] of `key`.
pub(crate) fn setting(key: &str, why: impl std::fmt::Display) -> StudyError {
    StudyError::Setting {
        key: key.to_string(),
        why: why.to_string(),
    }
}

/// Mesh coordinates `x,y` given to option `key`.
pub fn coords(key: &str, s: &str) -> Result<(u32, u32), StudyError> {
    let bad = || {
        setting(
            key,
            format!("`{s}`: expected x,y mesh coordinates such as 3,4"),
        )
    };
    let (x, y) = s.split_once(',').ok_or_else(bad)?;
    Ok((
        x.trim().parse().map_err(|_| bad())?,
        y.trim().parse().map_err(|_| bad())?,
    ))
}

/// The DOJO mesh `--topology` built (`barrier`, `transfer`: dojo:die, dojo:tile).
pub fn mesh(topology: &str, net: Network) -> Result<Dojo, StudyError> {
    let Network::Dojo(d) = net else {
        return Err(setting(
            "--topology",
            format!("`{topology}` is not a DOJO network (dojo:die, dojo:tile)"),
        ));
    };
    Ok(d)
}

/// The shorthand of a plane with its DIPs that `--topology` means: dojo:tile is one tile with
/// its DIPs (dojo:system=1x1), dojo:plane a 5 x 5-tile plane (dojo:system=5x5).
pub fn plane_shorthand(topology: &str) -> &str {
    match topology {
        "dojo:tile" => "dojo:system=1x1",
        t => t,
    }
}

/// The DOJO plane with its DIPs that [`plane_shorthand`] built (`shortcuts`, `dma`, `host`).
pub fn plane(topology: &str, net: Network) -> Result<Dojo, StudyError> {
    let Network::Dojo(d) = net else {
        return Err(setting(
            "--topology",
            format!("`{topology}` is not a DOJO network (dojo:tile, dojo:plane, dojo:system=RxC)"),
        ));
    };
    Ok(d)
}
