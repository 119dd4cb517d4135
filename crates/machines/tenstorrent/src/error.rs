//! Why a DRAM study, a placement, a matmul or a drawing of them cannot be had: [`TtError`].

use podsim_noc::NocError;
use podsim_report::ReportError;
use podsim_topology::TopologyError;

/// Why a Tenstorrent DRAM study, reader placement, matmul or drawing failed: the grid, the
/// readers, the DRAM or the matmul out of range (each naming the value and what was expected),
/// or the NoC, the report or the file system refusing.
#[derive(Debug, thiserror::Error)]
pub enum TtError {
    /// The grid (or its harvest) does not build.
    #[error(transparent)]
    Grid(#[from] TopologyError),
    /// The packet-level NoC refused the network or a packet.
    #[error(transparent)]
    Noc(#[from] NocError),
    /// A DRAM bank the grid places on no tile (as the DRAM run finds it).
    #[error("bank without a tile")]
    BankTile,
    /// A DRAM bank the grid places on no tile (as a placement finds it).
    #[error("a bank without a tile")]
    PlacedBankTile,
    /// A placement that finds fewer working cores than banks.
    #[error("{grid} has room for {room} readers this way, not {banks}")]
    NoRoom {
        /// The grid's label.
        grid: String,
        /// Readers the placement finds room for.
        room: usize,
        /// The banks, one reader each.
        banks: usize,
    },
    /// No working core takes a bank's reader without overlapping another reader's route.
    #[error(
        "no working core of {grid} takes bank {bank}'s reader without overlapping another route"
    )]
    Overlap {
        /// The grid's label.
        grid: String,
        /// The bank.
        bank: usize,
    },
    /// No working core is left for a bank's reader (the logical placement).
    #[error("{grid} has no free working core for bank {bank}")]
    NoFreeCore {
        /// The grid's label.
        grid: String,
        /// The bank.
        bank: usize,
    },
    /// [`crate::placement::Placement::Auto`] ran no placement.
    #[error("no placement ran")]
    NoPlacement,
    /// A reader's bytes that are not at least one whole block.
    #[error("{bytes} bytes a reader in blocks of {block}: expected at least one whole block")]
    WholeBlock {
        /// Bytes per reader.
        bytes: u64,
        /// Bytes per block.
        block: u64,
    },
    /// A DRAM efficiency outside (0, 1].
    #[error("efficiency {0}: expected (0, 1]")]
    Efficiency(f64),
    /// A DRAM data rate that is not positive and finite.
    #[error("the data rate must be positive")]
    DataRate,
    /// A bank request queue of no requests.
    #[error("a bank must take at least one request at a time")]
    Queue,
    /// More readers than the tags can tell apart.
    #[error("at most 65,535 readers")]
    Readers,
    /// A reader of a bank the grid does not have.
    #[error("bank {bank}: the grid has banks 0 to {last}")]
    Bank {
        /// The bank asked for.
        bank: usize,
        /// The grid's last bank.
        last: usize,
    },
    /// A reader on a tile that is not a working Tensix core.
    #[error("reader tile {x},{y} is not a working Tensix core of {grid}")]
    ReaderTile {
        /// The tile's column.
        x: u32,
        /// The tile's row.
        y: u32,
        /// The grid's label.
        grid: String,
    },
    /// A page larger than one NoC packet, or empty.
    #[error("a page of {bytes} bytes: expected 1 to {max} (one NoC packet)")]
    Page {
        /// Bytes per page.
        bytes: u64,
        /// The largest page, bytes.
        max: u64,
    },
    /// A reader without blocks, bytes or an outstanding block.
    #[error("a reader needs blocks, bytes and at least one outstanding block")]
    EmptyReader,
    /// More blocks a reader than the tags can tell apart.
    #[error("{0} blocks: at most 16,777,215 per reader")]
    Blocks(u64),
    /// The readers ran past the cycle limit.
    #[error("the readers did not finish")]
    Unfinished,
    /// The readers stopped with nothing in flight and nothing to start.
    #[error("the readers stalled: nothing in flight, nothing to start")]
    Stalled,
    /// Data arrived for a block its reader does not have.
    #[error("data for no block")]
    NoBlock,
    /// A request arrived at a tile that holds no bank.
    #[error("a request reached no bank")]
    NoBank,
    /// A matmul tile width other than 32, 16 or 8.
    #[error("tile width {0}: expected 32, 16 or 8")]
    TileWidth(u64),
    /// A matmul dimension of zero.
    #[error("m, k and n must be positive")]
    Dimensions,
    /// A matmul k that is not a multiple of the tile height.
    #[error("k = {0}: expected a multiple of 32 (the tile height)")]
    TileHeight(u64),
    /// A matmul buffering other than single or double.
    #[error("buffers: expected 1 (single) or 2 (double)")]
    Buffers,
    /// A matmul k of more blocks than the tags can tell apart.
    #[error("k = {0}: too many blocks")]
    KBlocks(u64),
    /// The matmul's compute kernels did not finish every block.
    #[error("the compute kernels did not finish")]
    ComputeUnfinished,
    /// A drawing could not be drawn or saved.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// A file could not be written.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The file, as shown.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// `--energy` on a chip podsim has no power figures for.
    #[error(
        "the chip `{0}` has no power figures in podsim (Wormhole and Grayskull have: crates/energy/src/tenstorrent.rs)"
    )]
    NoPowerFigures(String),
    /// An energy figure that would break an invariant (not finite, negative, above the TBP).
    #[error("energy: {0}")]
    Energy(String),
}

/// The message, for callers that report errors as text.
impl From<TtError> for String {
    fn from(e: TtError) -> String {
        e.to_string()
    }
}
