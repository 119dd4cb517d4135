//! Sweeps past one machine. Built with the `mpi` feature (rsmpi on the system's MPI) and
//! started by `mpirun -n N podsim ... --sweep ...`, a sweep's points are spread over the
//! ranks, point i of each batch on rank i mod N; rank 0 alone opens the sweep's file, tells
//! the others which points are left, gathers each batch's results in point order, writes them
//! as one process would and prints the output; the other ranks print nothing. Without the
//! feature, or not started by an MPI launcher, podsim is one process (rank 0 of 1) and these
//! functions do nothing but call back.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Why spreading a run over the ranks failed (encoding, or a rank that sent too little).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RanksError(pub String);

/// What keeps MPI up while podsim runs (finalized when dropped, at the end of `main`).
pub struct Guard {
    #[cfg(feature = "mpi")]
    _universe: mpi::environment::Universe,
}

/// Start MPI if this process was started by an MPI launcher (and the `mpi` feature is on).
pub fn init() -> Option<Guard> {
    #[cfg(feature = "mpi")]
    {
        let launched = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
            .iter()
            .any(|v| std::env::var_os(v).is_some());
        if launched {
            return mpi::initialize().map(|u| Guard { _universe: u });
        }
    }
    None
}

/// This process's rank and the number of ranks: (0, 1) without MPI.
pub fn place() -> (usize, usize) {
    #[cfg(feature = "mpi")]
    {
        use mpi::traits::Communicator;
        if mpi::environment::is_initialized() {
            let w = mpi::topology::SimpleCommunicator::world();
            return (w.rank() as usize, w.size() as usize);
        }
    }
    (0, 1)
}

fn encode<T: Serialize>(v: &T) -> Result<Vec<u8>, RanksError> {
    serde_json::to_vec(v).map_err(|e| RanksError(format!("MPI: cannot encode: {e}")))
}

#[cfg(feature = "mpi")]
fn decode<T: DeserializeOwned>(b: &[u8]) -> Result<T, RanksError> {
    serde_json::from_slice(b).map_err(|e| RanksError(format!("MPI: cannot decode: {e}")))
}

/// Rank 0's value on every rank: rank 0 passes `Some`, the others `None` and get rank 0's.
pub fn share<T: Serialize + DeserializeOwned>(v: Option<T>) -> Result<T, RanksError> {
    let (rank, size) = place();
    if size == 1 {
        return v.ok_or_else(|| RanksError("MPI: rank 0 shared nothing".to_string()));
    }
    #[cfg(feature = "mpi")]
    {
        use mpi::traits::{Communicator, Root};
        let w = mpi::topology::SimpleCommunicator::world();
        let root = w.process_at_rank(0);
        let mut bytes = match (&v, rank) {
            (Some(v), 0) => encode(v)?,
            _ => Vec::new(),
        };
        let mut len = bytes.len() as u64;
        root.broadcast_into(&mut len);
        bytes.resize(len as usize, 0);
        root.broadcast_into(&mut bytes[..]);
        return decode(&bytes);
    }
    #[allow(unreachable_code)]
    {
        let _ = rank;
        Err(RanksError(
            "MPI: more than one rank without MPI".to_string(),
        ))
    }
}

/// The results of `n` points, point i computed on rank i mod size by `local` (given the
/// indices this rank owns, ascending; it returns their results in that order): on rank 0 all
/// `n` in point order, on the others `None`.
pub fn spread<T: Serialize + DeserializeOwned>(
    n: usize,
    local: impl FnOnce(&[usize]) -> Vec<T>,
) -> Result<Option<Vec<T>>, RanksError> {
    let (rank, size) = place();
    let mine: Vec<usize> = (rank..n).step_by(size).collect();
    let got = local(&mine);
    if size == 1 {
        return Ok(Some(got));
    }
    let bytes = encode(&got)?;
    #[cfg(feature = "mpi")]
    {
        use mpi::traits::{Communicator, Destination, Source};
        let w = mpi::topology::SimpleCommunicator::world();
        if rank != 0 {
            if !mine.is_empty() {
                w.process_at_rank(0).send(&bytes[..]);
            }
            return Ok(None);
        }
        let mut per_rank: Vec<std::vec::IntoIter<T>> = Vec::with_capacity(size);
        per_rank.push(got.into_iter());
        for r in 1..size.min(n) {
            let (b, _) = w.process_at_rank(r as i32).receive_vec::<u8>();
            per_rank.push(decode::<Vec<T>>(&b)?.into_iter());
        }
        let mut all = Vec::with_capacity(n);
        for i in 0..n {
            let v = per_rank[i % size]
                .next()
                .ok_or_else(|| RanksError(format!("MPI: rank {} sent too few points", i % size)))?;
            all.push(v);
        }
        return Ok(Some(all));
    }
    #[allow(unreachable_code)]
    {
        let _ = bytes;
        Err(RanksError(
            "MPI: more than one rank without MPI".to_string(),
        ))
    }
}
