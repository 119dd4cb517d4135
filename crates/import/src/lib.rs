//! podsim's importers: other tools' input files as podsim's typed specs and files.
//!
//! - [`booksim`]: a BookSim 2 configuration as podsim's router configuration and the
//!   `podsim noc` run of the same network and traffic;
//! - [`scalesim`]: a SCALE-Sim configuration and topology CSV as GEMMs on podsim's array;
//! - [`astra`]: an ASTRA-sim network configuration (YAML or the older JSON) as a podsim
//!   system file, and its system configuration's implementations as podsim's algorithm;
//! - [`chakra`]: Chakra execution traces (protobuf, one file per rank) as a podsim workload.
//!
//! This crate knows other tools' file formats and what podsim makes of them; it never builds
//! or runs a model: the CLI runs what it returns. It reads no files either (but for resolving
//! Chakra trace paths): each importer takes a file's text or bytes and the name errors cite.
//! Every error is an [`ImportError`] naming the file, where in it, the key and what was
//! expected; every key podsim does not honour is listed, never dropped in silence.

pub mod astra;
pub mod booksim;
pub mod chakra;
mod error;
pub mod scalesim;

pub use error::{ErrorKind, ImportError, Location, Result};
