//! `podsim import chakra`: Chakra execution traces (one file per rank) as a podsim workload,
//! printed or written, and run on a machine.
//!
//! A Chakra ET file is a `GlobalMetadata` message and then `Node` messages, each preceded by
//! its length as a varint (chakra/src/third_party/utils/protolib.py). The messages below are
//! written by hand from the vendored schema, examples/chakra/et_def.proto (mlcommons/chakra at
//! 21585d8f, Apache-2.0), so no protoc is needed to build podsim.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use podsim_collective::Kind;
use podsim_report::render;
use podsim_system::TopoSpec;
use podsim_system::workload::ChipSpec;
use podsim_units::{Bytes, Flops};
use serde_json::json;

use crate::collective_cmd::flag_err;
use crate::{Failure, MAX_INPUT_BYTES};

/// The messages of Chakra's et_def.proto (package ChakraProtoMsg), field for field. The
/// schema's `Tensor` message is not part of an ET file's stream and is left out.
pub mod et {
    /// A named attribute of a node or of the trace (`AttributeProto`).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct AttributeProto {
        /// The attribute's name (`num_ops`, `comm_type`, ...).
        #[prost(string, tag = "1")]
        pub name: String,
        /// Its documentation.
        #[prost(string, tag = "2")]
        pub doc_string: String,
        /// Its value.
        #[prost(
            oneof = "Value",
            tags = "3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32"
        )]
        pub value: Option<Value>,
    }

    /// The `value` oneof of `AttributeProto`.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Value {
        /// double_val = 3.
        #[prost(double, tag = "3")]
        DoubleVal(f64),
        /// double_list = 4.
        #[prost(message, tag = "4")]
        DoubleList(DoubleList),
        /// float_val = 5.
        #[prost(float, tag = "5")]
        FloatVal(f32),
        /// float_list = 6.
        #[prost(message, tag = "6")]
        FloatList(FloatList),
        /// int32_val = 7.
        #[prost(int32, tag = "7")]
        Int32Val(i32),
        /// int32_list = 8.
        #[prost(message, tag = "8")]
        Int32List(Int32List),
        /// int64_val = 9.
        #[prost(int64, tag = "9")]
        Int64Val(i64),
        /// int64_list = 10.
        #[prost(message, tag = "10")]
        Int64List(Int64List),
        /// uint32_val = 11.
        #[prost(uint32, tag = "11")]
        Uint32Val(u32),
        /// uint32_list = 12.
        #[prost(message, tag = "12")]
        Uint32List(Uint32List),
        /// uint64_val = 13.
        #[prost(uint64, tag = "13")]
        Uint64Val(u64),
        /// uint64_list = 14.
        #[prost(message, tag = "14")]
        Uint64List(Uint64List),
        /// sint32_val = 15.
        #[prost(sint32, tag = "15")]
        Sint32Val(i32),
        /// sint32_list = 16.
        #[prost(message, tag = "16")]
        Sint32List(Sint32List),
        /// sint64_val = 17.
        #[prost(sint64, tag = "17")]
        Sint64Val(i64),
        /// sint64_list = 18.
        #[prost(message, tag = "18")]
        Sint64List(Sint64List),
        /// fixed32_val = 19.
        #[prost(fixed32, tag = "19")]
        Fixed32Val(u32),
        /// fixed32_list = 20.
        #[prost(message, tag = "20")]
        Fixed32List(Fixed32List),
        /// fixed64_val = 21.
        #[prost(fixed64, tag = "21")]
        Fixed64Val(u64),
        /// fixed64_list = 22.
        #[prost(message, tag = "22")]
        Fixed64List(Fixed64List),
        /// sfixed32_val = 23.
        #[prost(sfixed32, tag = "23")]
        Sfixed32Val(i32),
        /// sfixed32_list = 24.
        #[prost(message, tag = "24")]
        Sfixed32List(Sfixed32List),
        /// sfixed64_val = 25.
        #[prost(sfixed64, tag = "25")]
        Sfixed64Val(i64),
        /// sfixed64_list = 26.
        #[prost(message, tag = "26")]
        Sfixed64List(Sfixed64List),
        /// bool_val = 27.
        #[prost(bool, tag = "27")]
        BoolVal(bool),
        /// bool_list = 28.
        #[prost(message, tag = "28")]
        BoolList(BoolList),
        /// string_val = 29.
        #[prost(string, tag = "29")]
        StringVal(String),
        /// string_list = 30.
        #[prost(message, tag = "30")]
        StringList(StringList),
        /// bytes_val = 31.
        #[prost(bytes = "vec", tag = "31")]
        BytesVal(Vec<u8>),
        /// bytes_list = 32.
        #[prost(message, tag = "32")]
        BytesList(BytesList),
    }

    macro_rules! list {
        ($(#[$doc:meta] $name:ident, $kind:ident, $ty:ty;)*) => {$(
            #[$doc]
            #[derive(Clone, PartialEq, prost::Message)]
            pub struct $name {
                /// The values.
                #[prost($kind, repeated, tag = "1")]
                pub values: Vec<$ty>,
            }
        )*};
    }
    list! {
        /// `repeated double values = 1`.
        DoubleList, double, f64;
        /// `repeated float values = 1`.
        FloatList, float, f32;
        /// `repeated int32 values = 1`.
        Int32List, int32, i32;
        /// `repeated int64 values = 1`.
        Int64List, int64, i64;
        /// `repeated uint32 values = 1`.
        Uint32List, uint32, u32;
        /// `repeated uint64 values = 1`.
        Uint64List, uint64, u64;
        /// `repeated sint32 values = 1`.
        Sint32List, sint32, i32;
        /// `repeated sint64 values = 1`.
        Sint64List, sint64, i64;
        /// `repeated fixed32 values = 1`.
        Fixed32List, fixed32, u32;
        /// `repeated fixed64 values = 1`.
        Fixed64List, fixed64, u64;
        /// `repeated sfixed32 values = 1`.
        Sfixed32List, sfixed32, i32;
        /// `repeated sfixed64 values = 1`.
        Sfixed64List, sfixed64, i64;
        /// `repeated bool values = 1`.
        BoolList, bool, bool;
        /// `repeated string values = 1`.
        StringList, string, String;
    }

    /// `repeated bytes values = 1`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BytesList {
        /// The values.
        #[prost(bytes = "vec", repeated, tag = "1")]
        pub values: Vec<Vec<u8>>,
    }

    /// The first message of an ET file.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct GlobalMetadata {
        /// The schema version.
        #[prost(string, tag = "1")]
        pub version: String,
        /// Attributes of the trace.
        #[prost(message, repeated, tag = "2")]
        pub attr: Vec<AttributeProto>,
    }

    /// What a node does.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[allow(clippy::enum_variant_names)]
    pub enum NodeType {
        /// INVALID_NODE = 0.
        InvalidNode = 0,
        /// METADATA_NODE = 1.
        MetadataNode = 1,
        /// MEM_LOAD_NODE = 2.
        MemLoadNode = 2,
        /// MEM_STORE_NODE = 3.
        MemStoreNode = 3,
        /// COMP_NODE = 4.
        CompNode = 4,
        /// COMM_SEND_NODE = 5.
        CommSendNode = 5,
        /// COMM_RECV_NODE = 6.
        CommRecvNode = 6,
        /// COMM_COLL_NODE = 7.
        CommCollNode = 7,
    }

    /// A collective's kind (the `comm_type` attribute).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    pub enum CollectiveCommType {
        /// ALL_REDUCE = 0.
        AllReduce = 0,
        /// REDUCE = 1.
        Reduce = 1,
        /// ALL_GATHER = 2.
        AllGather = 2,
        /// GATHER = 3.
        Gather = 3,
        /// SCATTER = 4.
        Scatter = 4,
        /// BROADCAST = 5.
        Broadcast = 5,
        /// ALL_TO_ALL = 6.
        AllToAll = 6,
        /// REDUCE_SCATTER = 7.
        ReduceScatter = 7,
        /// REDUCE_SCATTER_BLOCK = 8.
        ReduceScatterBlock = 8,
        /// BARRIER = 9.
        Barrier = 9,
    }

    /// One operation of the trace.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Node {
        /// Its id, unique in its file.
        #[prost(uint64, tag = "1")]
        pub id: u64,
        /// Its name.
        #[prost(string, tag = "2")]
        pub name: String,
        /// Its type.
        #[prost(enumeration = "NodeType", tag = "3")]
        pub r#type: i32,
        /// Nodes that must finish first (control).
        #[prost(uint64, repeated, tag = "4")]
        pub ctrl_deps: Vec<u64>,
        /// Nodes whose data it reads.
        #[prost(uint64, repeated, tag = "5")]
        pub data_deps: Vec<u64>,
        /// When it started in the traced run.
        #[prost(uint64, tag = "6")]
        pub start_time_micros: u64,
        /// How long it took in the traced run.
        #[prost(uint64, tag = "7")]
        pub duration_micros: u64,
        /// Its inputs.
        #[prost(message, optional, tag = "8")]
        pub inputs: Option<IoInfo>,
        /// Its outputs.
        #[prost(message, optional, tag = "9")]
        pub outputs: Option<IoInfo>,
        /// Its attributes.
        #[prost(message, repeated, tag = "10")]
        pub attr: Vec<AttributeProto>,
    }

    /// A node's inputs or outputs (`IOInfo`).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct IoInfo {
        /// Values.
        #[prost(string, tag = "1")]
        pub values: String,
        /// Shapes.
        #[prost(string, tag = "2")]
        pub shapes: String,
        /// Types.
        #[prost(string, tag = "3")]
        pub types: String,
    }
}

use et::{AttributeProto, CollectiveCommType, Node, NodeType, Value};

impl NodeType {
    /// The schema's name (`COMP_NODE`).
    fn proto_name(self) -> &'static str {
        match self {
            NodeType::InvalidNode => "INVALID_NODE",
            NodeType::MetadataNode => "METADATA_NODE",
            NodeType::MemLoadNode => "MEM_LOAD_NODE",
            NodeType::MemStoreNode => "MEM_STORE_NODE",
            NodeType::CompNode => "COMP_NODE",
            NodeType::CommSendNode => "COMM_SEND_NODE",
            NodeType::CommRecvNode => "COMM_RECV_NODE",
            NodeType::CommCollNode => "COMM_COLL_NODE",
        }
    }
}

/// The arguments of `podsim import chakra`.
#[derive(Args)]
pub struct ChakraArgs {
    /// The trace's files, one per rank (Chakra's `NAME.RANK.et`; ranks come from the number
    /// before `.et` when every file has one, else from the order given).
    #[arg(required = true, value_name = "TRACE.et")]
    traces: Vec<PathBuf>,
    /// The machine, a topology shorthand or preset (`podsim topo --help`) [default: ring:N,
    /// a ring of the trace's ranks (at least 2) with 50 GB/s links, TPU v4 chips].
    #[arg(long, value_name = "PRESET", conflicts_with = "topology")]
    machine: Option<String>,
    /// The machine as a system TOML file (what `podsim import astra-sim --out` writes).
    #[arg(long, value_name = "FILE")]
    topology: Option<PathBuf>,
    /// The chip: tpuv4, tpuv3, a100, dojo-node or d1 [default: the machine's own chip, else
    /// tpuv4].
    #[arg(long, value_name = "CHIP")]
    chip: Option<String>,
    /// analytic, flow or packet, as `podsim workload --model`.
    #[arg(long, value_name = "MODEL", default_value = "flow")]
    model: String,
    /// Write the workload (TOML, what `podsim workload` reads) here instead of printing it.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print one JSON object (keys: ranks, machine, workload (the TOML text), command, run
    /// (the keys of `podsim workload --json`), not_honoured).
    #[arg(long)]
    json: bool,
}

/// One rank's file, decoded.
struct RankTrace {
    file: String,
    version: String,
    meta_attrs: Vec<String>,
    nodes: Vec<Node>,
}

/// Read one varint at `pos` (at most 10 bytes).
fn varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..70).step_by(7) {
        let b = *buf.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

fn decode(file: &str, buf: &[u8]) -> Result<RankTrace, Failure> {
    use prost::Message;
    if buf.starts_with(&[0x1f, 0x8b]) {
        return Err(Failure::usage(format!(
            "{file}: gzip-compressed; decompress it first (gunzip), podsim reads the plain length-delimited ET"
        )));
    }
    let mut pos = 0;
    let mut next = |what: &str| -> Result<Option<&[u8]>, Failure> {
        if pos == buf.len() {
            return Ok(None);
        }
        let at = pos;
        let len = varint(buf, &mut pos).ok_or_else(|| {
            Failure::usage(format!("{file}: byte {at}: a bad length varint before a {what} message; expected a Chakra ET file (length-delimited protobuf)"))
        })?;
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| pos.checked_add(l))
            .filter(|&e| e <= buf.len())
            .ok_or_else(|| {
                Failure::usage(format!(
                    "{file}: byte {at}: a {what} message of {len} bytes runs past the end of the file ({} bytes); the file is cut short or not a Chakra ET file",
                    buf.len()
                ))
            })?;
        let msg = &buf[pos..end];
        pos = end;
        Ok(Some(msg))
    };
    let Some(meta) = next("GlobalMetadata")? else {
        return Err(Failure::usage(format!(
            "{file}: empty; expected a GlobalMetadata message and then Node messages"
        )));
    };
    let meta = et::GlobalMetadata::decode(meta).map_err(|e| {
        Failure::usage(format!(
            "{file}: the first message is not a GlobalMetadata: {e}"
        ))
    })?;
    let mut nodes = Vec::new();
    while let Some(m) = next("Node")? {
        let n = Node::decode(m).map_err(|e| {
            Failure::usage(format!(
                "{file}: message {} is not a Chakra Node: {e}",
                nodes.len() + 2
            ))
        })?;
        nodes.push(n);
    }
    Ok(RankTrace {
        file: file.to_string(),
        version: meta.version,
        meta_attrs: meta.attr.iter().map(|a| a.name.clone()).collect(),
        nodes,
    })
}

/// An attribute's value as a whole number, from whichever integer field Chakra wrote.
fn int_of(a: &AttributeProto) -> Option<i128> {
    match a.value.as_ref()? {
        Value::Int32Val(v) | Value::Sint32Val(v) | Value::Sfixed32Val(v) => Some(i128::from(*v)),
        Value::Int64Val(v) | Value::Sint64Val(v) | Value::Sfixed64Val(v) => Some(i128::from(*v)),
        Value::Uint32Val(v) | Value::Fixed32Val(v) => Some(i128::from(*v)),
        Value::Uint64Val(v) | Value::Fixed64Val(v) => Some(i128::from(*v)),
        _ => None,
    }
}

/// What a task does.
enum Work {
    /// FLOPs on the matrix unit (or the vector unit for a host op), and how they were set.
    Compute { flops: u64, vector: bool },
    /// Bytes between HBM and the chip.
    Memory(u64),
    /// A collective on every rank of the trace.
    Collective { kind: Kind, bytes: Option<u64> },
    /// A point-to-point transfer.
    Send { from: u64, to: u64, bytes: u64 },
}

struct Task {
    name: String,
    work: Work,
    /// The rank it runs on (not for collectives and sends).
    rank: Option<u64>,
    after: Vec<usize>,
    /// Where it came from, as a comment in the workload.
    note: String,
}

/// What a node became: a task, or nothing (its dependents wait on its own dependencies).
#[derive(Clone, Copy)]
enum Target {
    Task(usize),
    Pass,
}

/// Notes of what is not honoured, grouped so a large trace lists each kind once.
#[derive(Default)]
struct Notes(BTreeMap<String, (u64, String)>);

impl Notes {
    fn add(&mut self, what: String, example: String) {
        let e = self.0.entry(what).or_insert((0, example));
        e.0 += 1;
    }
    fn lines(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|(what, (n, ex))| {
                if *n == 1 {
                    format!("{what} ({ex})")
                } else {
                    format!("{what} ({n} times, e.g. {ex})")
                }
            })
            .collect()
    }
}

/// The rank of each file: the number in `NAME.RANK.et` when every file has one and they are
/// 0..n-1, else the order given.
fn ranks(paths: &[PathBuf]) -> Vec<usize> {
    let nums: Option<Vec<usize>> = paths
        .iter()
        .map(|p| {
            let stem = p.file_stem()?.to_str()?;
            let ext_ok = p.extension().is_some_and(|e| e == "et");
            let (_, n) = stem.rsplit_once('.')?;
            if ext_ok { n.parse().ok() } else { None }
        })
        .collect();
    if let Some(n) = nums {
        let mut sorted = n.clone();
        sorted.sort_unstable();
        if sorted.iter().enumerate().all(|(i, &r)| i == r) {
            return n;
        }
    }
    (0..paths.len()).collect()
}

fn read_bytes(path: &std::path::Path) -> Result<Vec<u8>, Failure> {
    use std::io::Read;
    let fail = |why: String| Failure::usage(format!("{}: cannot read: {why}", path.display()));
    let f = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let mut bytes = Vec::new();
    f.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(fail(format!(
            "larger than the {} an input file may have",
            Bytes(MAX_INPUT_BYTES)
        )));
    }
    Ok(bytes)
}

/// `podsim import chakra`.
pub fn chakra(a: &ChakraArgs) -> Result<ExitCode, Failure> {
    let (_, _, model) = podsim_collective::parse_names("barrier", None, &a.model)
        .map_err(|e| flag_err("--model", e))?;
    // One file a rank: the same file twice would be two ranks with one rank's trace.
    let same = |p: &PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
    for (i, p) in a.traces.iter().enumerate() {
        if let Some(q) = a.traces[..i].iter().find(|q| same(q) == same(p)) {
            return Err(Failure::usage(format!(
                "{}: given twice (also as {}): each rank's trace is a file of its own",
                p.display(),
                q.display()
            )));
        }
    }
    // The traces, in rank order.
    let order = ranks(&a.traces);
    let mut traces: Vec<Option<RankTrace>> = (0..a.traces.len()).map(|_| None).collect();
    for (p, &r) in a.traces.iter().zip(&order) {
        let file = p.display().to_string();
        traces[r] = Some(decode(&file, &read_bytes(p)?)?);
    }
    let traces: Vec<RankTrace> = traces.into_iter().flatten().collect();
    let n_ranks = traces.len() as u64;
    // The machine.
    let (machine_table, system, machine_label) = machine(a, n_ranks)?;
    let net = crate::build(&system, &machine_label)?;
    let chips = net.endpoints();
    if n_ranks > chips {
        return Err(Failure::usage(format!(
            "{}: the trace has {n_ranks} ranks and the machine {machine_label} has {chips} chips; give a machine with at least {n_ranks}",
            traces[0].file
        )));
    }
    let chip_name = match (&a.chip, &system.topology) {
        (Some(c), _) => c.clone(),
        (None, TopoSpec::TpuV4 { .. }) => "tpuv4".into(),
        (None, TopoSpec::Dojo(_)) => "dojo-node".into(),
        (None, _) => "tpuv4".into(),
    };
    let chip = ChipSpec::preset(&chip_name).ok_or_else(|| {
        flag_err(
            "--chip",
            format!(
                "`{chip_name}` is not a chip preset (choose from: {})",
                ChipSpec::names().join(", ")
            ),
        )
    })?;
    let mut notes = Notes::default();
    let tasks = convert(&traces, &chip, &mut notes)?;
    // The workload file.
    let files: Vec<String> = traces.iter().map(|t| t.file.clone()).collect();
    let name = format!("Chakra trace {} ({n_ranks} ranks)", files[0]);
    let mut text = format!(
        "# podsim's workload for the Chakra trace {} (podsim import chakra): {n_ranks} ranks, rank r on chip r.\n# A node's duration_micros is kept as FLOPs at the {} chip's peak, so it takes that long on it.\nname = {}\n\n",
        files.join(", "),
        chip.name,
        toml::Value::String(name.clone())
    );
    let mut machine_table = machine_table;
    machine_table.insert("chip".into(), toml::Value::String(chip.name.clone()));
    machine_table.insert("model".into(), toml::Value::String(model.name().into()));
    let mut machine_doc = toml::Table::new();
    machine_doc.insert("machine".into(), toml::Value::Table(machine_table));
    let mt = toml::to_string(&machine_doc)
        .map_err(|e| Failure::runtime(format!("cannot write the machine: {e}")))?;
    text.push_str(&mt);
    let group_all = if n_ranks == chips {
        "\"all\"".to_string()
    } else {
        format!("\"0-{}\"", n_ranks - 1)
    };
    for t in &tasks {
        text.push_str(&format!(
            "\n# {}\n[[task]]\nname = {}\n",
            t.note,
            toml::Value::String(t.name.clone())
        ));
        match &t.work {
            Work::Compute { flops, vector } => {
                text.push_str(&format!(
                    "compute = {{ flops = \"{}\", efficiency = 1.0{} }}\n",
                    Flops(*flops),
                    if *vector { ", unit = \"vector\"" } else { "" }
                ));
            }
            Work::Memory(b) => text.push_str(&format!("memory = \"{}\"\n", Bytes(*b))),
            Work::Collective { kind, bytes } => {
                text.push_str(&format!("collective = \"{}\"\n", kind.name()));
                if let Some(b) = bytes {
                    text.push_str(&format!("bytes = \"{}\"\n", Bytes(*b)));
                }
                text.push_str(&format!("group = {group_all}\n"));
            }
            Work::Send { from, to, bytes } => {
                text.push_str(&format!(
                    "send = \"{}\"\ngroup = [{from}]\nto = [{to}]\n",
                    Bytes(*bytes)
                ));
            }
        }
        if let Some(r) = t.rank {
            text.push_str(&format!("group = [{r}]\n"));
        }
        if !t.after.is_empty() {
            let names: Vec<String> = t
                .after
                .iter()
                .map(|&i| toml::Value::String(tasks[i].name.clone()).to_string())
                .collect();
            text.push_str(&format!("after = [{}]\n", names.join(", ")));
        }
    }
    let label = a
        .out
        .as_ref()
        .map_or("WORKLOAD.toml".to_string(), |p| p.display().to_string());
    let spec = podsim_config::parse_workload(&label, &text)?;
    let (net, r) =
        podsim_system::scenario::run_workload(&spec, model).map_err(crate::scenario_failure)?;
    let command = format!("podsim workload {label}");
    if let Some(p) = &a.out {
        std::fs::write(p, &text)
            .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", p.display())))?;
    }
    let mut not_honoured = Vec::new();
    for t in &traces {
        if !t.meta_attrs.is_empty() {
            not_honoured.push(format!(
                "{}: GlobalMetadata (version {}) attributes {} (describe the traced run; podsim reads only the nodes)",
                t.file,
                t.version,
                t.meta_attrs.join(", ")
            ));
        }
    }
    not_honoured.extend(notes.lines());
    if a.json {
        outln!(
            "{}",
            json!({
                "ranks": n_ranks,
                "machine": machine_label,
                "workload": text,
                "command": command,
                "run": crate::workload_cmd::result_json(&spec, &r, model, net.endpoints()),
                "not_honoured": not_honoured,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    if a.out.is_none() {
        out!("{text}");
    }
    outln!("# run it: {command}");
    let mut rows = vec![(
        "# machine".to_string(),
        vec![format!(
            "{machine_label} ({} chips of {}), {} model",
            net.endpoints(),
            spec.chip.name,
            model.name()
        )],
    )];
    for (k, v) in crate::workload_cmd::summary(&r) {
        rows.push((format!("# {k}"), v));
    }
    out!("{}", render(&rows));
    for n in &not_honoured {
        outln!("# not honoured: {n}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The [machine] table (without chip and model), the system it builds and a label.
fn machine(
    a: &ChakraArgs,
    ranks: u64,
) -> Result<(toml::Table, podsim_system::SystemSpec, String), Failure> {
    let mut t = toml::Table::new();
    if let Some(path) = &a.topology {
        let file = path.display().to_string();
        let text = crate::read(path)?;
        let spec = podsim_config::parse_system(&file, &text)?;
        let table: toml::Table =
            toml::from_str(&text).map_err(|e| Failure::usage(format!("{file}: not TOML: {e}")))?;
        t.insert("system".into(), toml::Value::Table(table));
        return Ok((t, spec, file));
    }
    let preset = a
        .machine
        .clone()
        .unwrap_or_else(|| format!("ring:{}", ranks.max(2)));
    let spec = podsim_config::system_from_cli(&preset, None, None, None).map_err(|mut e| {
        e.key = "--machine".into();
        Failure::from(e)
    })?;
    t.insert("preset".into(), toml::Value::String(preset.clone()));
    Ok((t, spec, preset))
}

/// A node's size in bytes from `comm_size` (or `tensor_size`, as Chakra's generator writes
/// sends and receives).
fn size_of(
    file: &str,
    n: &Node,
    attrs: &HashMap<&str, &AttributeProto>,
    keys: &[&str],
) -> Result<u64, Failure> {
    for k in keys {
        if let Some(a) = attrs.get(k) {
            return int_of(a)
                .and_then(|v| u64::try_from(v).ok())
                .ok_or_else(|| {
                    Failure::usage(format!(
                        "{file}: node {} (`{}`): `{k}`: expected a non-negative whole number of bytes",
                        n.id, n.name
                    ))
                });
        }
    }
    Err(Failure::usage(format!(
        "{file}: node {} (`{}`): no `{}`; expected its size in bytes",
        n.id,
        n.name,
        keys.join("` or `")
    )))
}

/// The trace's nodes as tasks in an order where every task comes after its dependencies.
fn convert(traces: &[RankTrace], chip: &ChipSpec, notes: &mut Notes) -> Result<Vec<Task>, Failure> {
    // Pass 1: each node's task (or pass-through), collectives matched by their order on each
    // rank, sends with receives by (source, destination, tag) in order.
    let mut tasks: Vec<Task> = Vec::new();
    let mut targets: Vec<HashMap<u64, Target>> = vec![HashMap::new(); traces.len()];
    let mut collectives: Vec<usize> = Vec::new();
    let mut coll_seen = vec![0usize; traces.len()];
    // Sends by (from, to, tag): their tasks in order; receives likewise: (rank, node id,
    // bytes).
    type Pair = (u64, u64, i128);
    let mut sends: BTreeMap<Pair, Vec<usize>> = BTreeMap::new();
    let mut recvs: BTreeMap<Pair, Vec<(usize, u64, u64)>> = BTreeMap::new();
    let handled = [
        "is_cpu_op",
        "num_ops",
        "tensor_size",
        "comm_type",
        "comm_size",
        "comm_src",
        "comm_dst",
        "comm_tag",
    ];
    for (rank, tr) in traces.iter().enumerate() {
        let rank_u = rank as u64;
        let file = tr.file.as_str();
        for n in &tr.nodes {
            if targets[rank].contains_key(&n.id) {
                return Err(Failure::usage(format!(
                    "{file}: node id {} appears twice; expected ids unique in a file",
                    n.id
                )));
            }
            let attrs: HashMap<&str, &AttributeProto> =
                n.attr.iter().map(|a| (a.name.as_str(), a)).collect();
            let ty = NodeType::try_from(n.r#type).map_err(|_| {
                Failure::usage(format!(
                    "{file}: node {} (`{}`): type {} is not a Chakra NodeType; expected COMP_NODE, MEM_LOAD_NODE, MEM_STORE_NODE, COMM_COLL_NODE, COMM_SEND_NODE, COMM_RECV_NODE or METADATA_NODE",
                    n.id, n.name, n.r#type
                ))
            })?;
            let cpu = attrs
                .get("is_cpu_op")
                .is_some_and(|a| matches!(a.value, Some(Value::BoolVal(true))));
            let here = format!("{file} node {}", n.id);
            // What a node of this type reads.
            let reads: &[&str] = match ty {
                NodeType::CompNode => &["is_cpu_op", "num_ops"],
                NodeType::MemLoadNode | NodeType::MemStoreNode => &["is_cpu_op", "tensor_size"],
                NodeType::CommCollNode => &["is_cpu_op", "comm_type", "comm_size"],
                NodeType::CommSendNode | NodeType::CommRecvNode => &[
                    "is_cpu_op",
                    "comm_src",
                    "comm_dst",
                    "comm_tag",
                    "comm_size",
                    "tensor_size",
                ],
                NodeType::MetadataNode | NodeType::InvalidNode => &[],
            };
            for at in &n.attr {
                if reads.contains(&at.name.as_str()) {
                    continue;
                }
                let why = if handled.contains(&at.name.as_str()) {
                    "not read for this node type"
                } else {
                    match at.name.as_str() {
                        "pg_name" => "podsim runs collectives on all of the trace's ranks",
                        "comm_priority" => "podsim's transfers have no priority",
                        "involved_dim" => "podsim runs the collective on every dimension",
                        _ => "not modelled",
                    }
                };
                notes.add(
                    format!("attribute `{}` of {}: {why}", at.name, ty.proto_name()),
                    here.clone(),
                );
            }
            if n.start_time_micros != 0 {
                notes.add(
                    "start_time_micros: podsim starts a task when its dependencies are done".into(),
                    here.clone(),
                );
            }
            if n.inputs.is_some() || n.outputs.is_some() {
                notes.add(
                    "inputs/outputs: tensor values, shapes and types; podsim reads sizes from the attributes".into(),
                    here.clone(),
                );
            }
            let label = |prefix: &str| format!("{prefix} n{} {}", n.id, n.name);
            let target = match ty {
                NodeType::InvalidNode => {
                    return Err(Failure::usage(format!(
                        "{file}: node {} (`{}`): INVALID_NODE; expected a node that does work (COMP_NODE, MEM_LOAD_NODE, MEM_STORE_NODE, COMM_COLL_NODE, COMM_SEND_NODE, COMM_RECV_NODE) or a METADATA_NODE",
                        n.id, n.name
                    )));
                }
                NodeType::MetadataNode => {
                    notes.add(
                        "METADATA_NODE: no work; its dependents wait on its dependencies".into(),
                        here.clone(),
                    );
                    Target::Pass
                }
                NodeType::CompNode => {
                    let ops = attrs.get("num_ops").map(|a| {
                        int_of(a).and_then(|v| u64::try_from(v).ok()).ok_or_else(|| {
                            Failure::usage(format!(
                                "{file}: node {} (`{}`): `num_ops`: expected a non-negative whole number",
                                n.id, n.name
                            ))
                        })
                    });
                    let ops = ops.transpose()?.unwrap_or(0);
                    let peak = if cpu {
                        chip.vector.ok_or_else(|| {
                            Failure::usage(format!(
                                "{file}: node {} (`{}`): a host op (is_cpu_op) runs on the chip's vector unit beside the matrix unit, and the {} chip gives no vector rate; choose another --chip",
                                n.id, n.name, chip.name
                            ))
                        })?
                    } else {
                        chip.matrix
                    };
                    let unit = if cpu { "vector unit" } else { "matrix unit" };
                    let (flops, note) = if n.duration_micros > 0 {
                        if ops > 0 {
                            notes.add(
                                "num_ops beside duration_micros: the measured duration is kept"
                                    .into(),
                                here.clone(),
                            );
                        }
                        // duration x peak, rounded to the nearest FLOP (well under a
                        // picosecond at any peak).
                        let f = (u128::from(n.duration_micros) * u128::from(peak.0) + 500_000)
                            / 1_000_000;
                        (
                            u64::try_from(f).unwrap_or(u64::MAX),
                            format!(
                                "{here}: COMP_NODE, duration_micros = {} on the {}'s {unit}",
                                n.duration_micros, chip.name
                            ),
                        )
                    } else if ops > 0 {
                        (
                            ops,
                            format!(
                                "{here}: COMP_NODE, num_ops = {ops} at the {}'s {unit} peak",
                                chip.name
                            ),
                        )
                    } else {
                        notes.add(
                            "COMP_NODE with no duration_micros and no num_ops: no work; its dependents wait on its dependencies".into(),
                            here.clone(),
                        );
                        targets[rank].insert(n.id, Target::Pass);
                        continue;
                    };
                    tasks.push(Task {
                        name: label(&format!("r{rank}")),
                        work: Work::Compute { flops, vector: cpu },
                        rank: Some(rank_u),
                        after: Vec::new(),
                        note,
                    });
                    Target::Task(tasks.len() - 1)
                }
                NodeType::MemLoadNode | NodeType::MemStoreNode => {
                    let b = size_of(file, n, &attrs, &["tensor_size"])?;
                    tasks.push(Task {
                        name: label(&format!("r{rank}")),
                        work: Work::Memory(b),
                        rank: Some(rank_u),
                        after: Vec::new(),
                        note: format!(
                            "{here}: {}, tensor_size = {b} (HBM to the chip)",
                            ty.proto_name()
                        ),
                    });
                    Target::Task(tasks.len() - 1)
                }
                NodeType::CommCollNode => {
                    let ct = attrs.get("comm_type").and_then(|a| int_of(a)).ok_or_else(|| {
                        Failure::usage(format!(
                            "{file}: node {} (`{}`): COMM_COLL_NODE without `comm_type`; expected a CollectiveCommType",
                            n.id, n.name
                        ))
                    })?;
                    let ct = i32::try_from(ct)
                        .ok()
                        .and_then(|v| CollectiveCommType::try_from(v).ok());
                    let kind = match ct {
                        Some(CollectiveCommType::AllReduce) => Kind::AllReduce,
                        Some(CollectiveCommType::Reduce) => Kind::Reduce,
                        Some(CollectiveCommType::AllGather) => Kind::AllGather,
                        Some(CollectiveCommType::Broadcast) => Kind::Broadcast,
                        Some(CollectiveCommType::AllToAll) => Kind::AllToAll,
                        Some(
                            CollectiveCommType::ReduceScatter
                            | CollectiveCommType::ReduceScatterBlock,
                        ) => Kind::ReduceScatter,
                        Some(CollectiveCommType::Barrier) => Kind::Barrier,
                        other => {
                            return Err(Failure::usage(format!(
                                "{file}: node {} (`{}`): comm_type {}: podsim has no such collective; expected ALL_REDUCE, REDUCE, ALL_GATHER, BROADCAST, ALL_TO_ALL, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK or BARRIER",
                                n.id,
                                n.name,
                                other.map_or("unknown".to_string(), |c| format!("{c:?}"))
                            )));
                        }
                    };
                    let bytes = if kind == Kind::Barrier {
                        None
                    } else {
                        Some(size_of(file, n, &attrs, &["comm_size"])?)
                    };
                    let k = coll_seen[rank];
                    coll_seen[rank] += 1;
                    let idx = if rank == 0 {
                        tasks.push(Task {
                            name: format!("c{k} {}", n.name),
                            work: Work::Collective { kind, bytes },
                            rank: None,
                            after: Vec::new(),
                            note: format!(
                                "collective {k} of every rank ({here} and the same on the others): {kind}{}",
                                bytes.map_or(String::new(), |b| format!(", comm_size = {b}"))
                            ),
                        });
                        collectives.push(tasks.len() - 1);
                        tasks.len() - 1
                    } else {
                        let Some(&idx) = collectives.get(k) else {
                            return Err(Failure::usage(format!(
                                "{file}: node {} (`{}`): collective {k} of this rank, and {} has only {}; expected every rank to run the same collectives in the same order",
                                n.id,
                                n.name,
                                traces[0].file,
                                collectives.len()
                            )));
                        };
                        if let Work::Collective {
                            kind: k0,
                            bytes: b0,
                        } = &tasks[idx].work
                        {
                            if (*k0, *b0) != (kind, bytes) {
                                return Err(Failure::usage(format!(
                                    "{file}: node {} (`{}`): {kind} of {} as this rank's collective {k}, where {} has {k0} of {}; expected every rank to run the same collectives in the same order",
                                    n.id,
                                    n.name,
                                    bytes.map_or("-".into(), |b| Bytes(b).to_string()),
                                    traces[0].file,
                                    b0.map_or("-".into(), |b| Bytes(b).to_string())
                                )));
                            }
                        }
                        idx
                    };
                    Target::Task(idx)
                }
                NodeType::CommSendNode | NodeType::CommRecvNode => {
                    let send = ty == NodeType::CommSendNode;
                    let peer_key = if send { "comm_dst" } else { "comm_src" };
                    let peer = attrs
                        .get(peer_key)
                        .and_then(|a| int_of(a))
                        .and_then(|v| u64::try_from(v).ok())
                        .filter(|&p| p < traces.len() as u64 && p != rank_u)
                        .ok_or_else(|| {
                            Failure::usage(format!(
                                "{file}: node {} (`{}`): `{peer_key}`: missing or not another rank of the trace; expected a rank from 0 to {}",
                                n.id,
                                n.name,
                                traces.len() - 1
                            ))
                        })?;
                    let tag = attrs.get("comm_tag").and_then(|a| int_of(a)).unwrap_or(0);
                    let b = size_of(file, n, &attrs, &["comm_size", "tensor_size"])?;
                    let (from, to) = if send { (rank_u, peer) } else { (peer, rank_u) };
                    if send {
                        tasks.push(Task {
                            name: format!("r{from}->r{to} n{} {}", n.id, n.name),
                            work: Work::Send { from, to, bytes: b },
                            rank: None,
                            after: Vec::new(),
                            note: format!(
                                "{here}: COMM_SEND_NODE to rank {to}, tag {tag}, {b} bytes, with its COMM_RECV_NODE on rank {to}"
                            ),
                        });
                        sends
                            .entry((from, to, tag))
                            .or_default()
                            .push(tasks.len() - 1);
                        Target::Task(tasks.len() - 1)
                    } else {
                        recvs
                            .entry((from, to, tag))
                            .or_default()
                            .push((rank, n.id, b));
                        // Resolved once every send is known.
                        Target::Pass
                    }
                }
            };
            targets[rank].insert(n.id, target);
        }
    }
    for (r, tr) in traces.iter().enumerate() {
        if coll_seen[r] != collectives.len() {
            return Err(Failure::usage(format!(
                "{}: {} collectives, and {} has {}; expected every rank to run the same collectives in the same order",
                tr.file,
                coll_seen[r],
                traces[0].file,
                collectives.len()
            )));
        }
    }
    // Match receives to sends.
    for (key, list) in &recvs {
        let sent = sends.get(key).map_or(&[][..], |v| v.as_slice());
        for (i, &(rank, id, b)) in list.iter().enumerate() {
            let file = &traces[rank].file;
            let Some(&t) = sent.get(i) else {
                return Err(Failure::usage(format!(
                    "{file}: node {id}: COMM_RECV_NODE from rank {} (tag {}) has no matching COMM_SEND_NODE in {}; expected one send for each receive",
                    key.0, key.2, traces[key.0 as usize].file
                )));
            };
            if let Work::Send { bytes, .. } = tasks[t].work {
                if bytes != b {
                    return Err(Failure::usage(format!(
                        "{file}: node {id}: receives {b} bytes from rank {} and its send (`{}`) sends {bytes}; expected the same size",
                        key.0, tasks[t].name
                    )));
                }
            }
            targets[rank].insert(id, Target::Task(t));
        }
    }
    for (key, list) in &sends {
        let got = recvs.get(key).map_or(0, Vec::len);
        if list.len() > got {
            let t = &tasks[list[got]];
            return Err(Failure::usage(format!(
                "{}: `{}`: COMM_SEND_NODE to rank {} (tag {}) has no matching COMM_RECV_NODE in {}; expected one receive for each send",
                traces[key.0 as usize].file, t.name, key.1, key.2, traces[key.1 as usize].file
            )));
        }
    }
    // Pass 2: dependencies. A node's dependencies are its data and control dependencies,
    // through pass-through nodes; a collective's are every rank's, a send's its receive's too.
    let mut memo: Vec<HashMap<u64, Vec<usize>>> = vec![HashMap::new(); traces.len()];
    let by_id: Vec<HashMap<u64, &Node>> = traces
        .iter()
        .map(|t| t.nodes.iter().map(|n| (n.id, n)).collect())
        .collect();
    for (rank, tr) in traces.iter().enumerate() {
        for n in &tr.nodes {
            let deps = deps_of(rank, n, &tr.file, &by_id, &targets, &mut memo)?;
            if let Some(Target::Task(t)) = targets[rank].get(&n.id).copied() {
                for d in deps {
                    if d != t && !tasks[t].after.contains(&d) {
                        tasks[t].after.push(d);
                    }
                }
            }
        }
    }
    order(tasks, traces)
}

/// The tasks `n` waits on: its dependencies' tasks, looking through pass-through nodes
/// (iteratively, so a long chain of them cannot exhaust the stack). `memo` holds what each
/// pass-through node resolves to.
fn deps_of(
    rank: usize,
    n: &Node,
    file: &str,
    by_id: &[HashMap<u64, &Node>],
    targets: &[HashMap<u64, Target>],
    memo: &mut [HashMap<u64, Vec<usize>>],
) -> Result<Vec<usize>, Failure> {
    let direct = |n: &Node| -> Result<Vec<u64>, Failure> {
        let mut ids = Vec::new();
        for &d in n.data_deps.iter().chain(&n.ctrl_deps) {
            if !by_id[rank].contains_key(&d) {
                return Err(Failure::usage(format!(
                    "{file}: node {} (`{}`): depends on node {d}, which is not in the file; expected the ids of nodes of the same rank",
                    n.id, n.name
                )));
            }
            ids.push(d);
        }
        Ok(ids)
    };
    // Resolve every pass-through node below `n` first: a depth-first walk with an explicit
    // stack; a node met again while still open closes a cycle.
    let mut open = std::collections::HashSet::new();
    let mut stack: Vec<(u64, bool)> = direct(n)?
        .into_iter()
        .filter(|d| !matches!(targets[rank].get(d), Some(Target::Task(_))))
        .map(|d| (d, false))
        .collect();
    while let Some((id, children_done)) = stack.pop() {
        if memo[rank].contains_key(&id) {
            continue;
        }
        let Some(&node) = by_id[rank].get(&id) else {
            continue;
        };
        let ds = direct(node)?;
        if children_done {
            let mut out = Vec::new();
            for d in ds {
                match targets[rank].get(&d) {
                    Some(Target::Task(t)) => out.push(*t),
                    _ => out.extend(memo[rank].get(&d).into_iter().flatten().copied()),
                }
            }
            out.sort_unstable();
            out.dedup();
            open.remove(&id);
            memo[rank].insert(id, out);
            continue;
        }
        if !open.insert(id) {
            return Err(Failure::usage(format!(
                "{file}: node {id} (`{}`): its dependencies lead back to it; expected a DAG",
                node.name
            )));
        }
        stack.push((id, true));
        for d in ds {
            if !matches!(targets[rank].get(&d), Some(Target::Task(_)))
                && !memo[rank].contains_key(&d)
            {
                if open.contains(&d) {
                    return Err(Failure::usage(format!(
                        "{file}: node {d}: its dependencies lead back to it; expected a DAG"
                    )));
                }
                stack.push((d, false));
            }
        }
    }
    let mut out = Vec::new();
    for d in direct(n)? {
        match targets[rank].get(&d) {
            Some(Target::Task(t)) => out.push(*t),
            _ => out.extend(memo[rank].get(&d).into_iter().flatten().copied()),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The tasks in an order where each comes after its dependencies (Kahn's algorithm, the
/// lowest index first), with `after` renumbered.
fn order(tasks: Vec<Task>, traces: &[RankTrace]) -> Result<Vec<Task>, Failure> {
    let n = tasks.len();
    let mut indegree: Vec<usize> = tasks.iter().map(|t| t.after.len()).collect();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, t) in tasks.iter().enumerate() {
        for &d in &t.after {
            users[d].push(i);
        }
    }
    let mut ready: std::collections::BTreeSet<usize> =
        (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut seq = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        seq.push(i);
        for &u in &users[i] {
            indegree[u] -= 1;
            if indegree[u] == 0 {
                ready.insert(u);
            }
        }
    }
    if seq.len() < n {
        let stuck: Vec<&str> = (0..n)
            .filter(|&i| indegree[i] > 0)
            .take(4)
            .map(|i| tasks[i].name.as_str())
            .collect();
        return Err(Failure::usage(format!(
            "{}: the ranks' dependencies, collectives and sends form a cycle (through {}); expected every rank to run its collectives in the same order",
            traces
                .iter()
                .map(|t| t.file.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            stuck.join(", ")
        )));
    }
    let mut new_index = vec![0; n];
    for (pos, &i) in seq.iter().enumerate() {
        new_index[i] = pos;
    }
    let mut slots: Vec<Option<Task>> = tasks.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(n);
    for &i in &seq {
        if let Some(mut t) = slots[i].take() {
            t.after = t.after.iter().map(|&d| new_index[d]).collect();
            t.after.sort_unstable();
            out.push(t);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Every prefix of a real trace, and arbitrary bytes, decode to a trace or an error, never
    /// a panic; the whole file decodes to its 5 nodes.
    #[test]
    fn decoding_never_panics() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/chakra/data-parallel/step.0.et"
        );
        let bytes = std::fs::read(path).unwrap();
        let Ok(t) = decode("step.0.et", &bytes) else {
            panic!("the real trace did not decode")
        };
        assert_eq!(t.nodes.len(), 5);
        assert_eq!(t.version, "0.0.4");
        for cut in 0..bytes.len() {
            let _ = decode("cut.et", &bytes[..cut]);
        }
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(19);
        for _ in 0..2000 {
            let n = rng.random_range(0..64);
            let junk: Vec<u8> = (0..n).map(|_| rng.random()).collect();
            let _ = decode("junk.et", &junk);
            let mut flipped = bytes.clone();
            let i = rng.random_range(0..flipped.len());
            flipped[i] ^= 1 << rng.random_range(0..8);
            let _ = decode("flipped.et", &flipped);
        }
    }

    #[test]
    fn varints_decode_as_protobuf_writes_them() {
        // 300 = 0b1_0010_1100: 0xac 0x02 (the protobuf encoding guide's example).
        let mut pos = 0;
        assert_eq!(varint(&[0xac, 0x02], &mut pos), Some(300));
        assert_eq!(pos, 2);
        // Eleven continuation bytes are no varint.
        let mut pos = 0;
        assert_eq!(varint(&[0xff; 11], &mut pos), None);
    }
}
