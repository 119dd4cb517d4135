//! Chakra execution traces (protobuf, one file per rank, e.g. from PyTorch through Chakra's
//! converter) as a podsim workload. COMP_NODE becomes compute (its duration_micros as FLOPs at
//! the chip's peak, else num_ops; host ops on the vector unit), MEM_LOAD/STORE_NODE memory
//! (tensor_size), COMM_COLL_NODE a collective on all ranks (matched by order on each rank),
//! COMM_SEND/RECV_NODE a send (matched by source, destination and tag); data_deps and
//! ctrl_deps become `after`. Attributes podsim does not honour are noted; a node with no
//! podsim equivalent is an error.
//!
//! A Chakra ET file is a `GlobalMetadata` message and then `Node` messages, each preceded by
//! its length as a varint (chakra/src/third_party/utils/protolib.py), decoded with the prost
//! messages of [`et`].

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use podsim_collective::Kind;
use podsim_system::workload::ChipSpec;
use podsim_units::{Bytes, Flops};

use crate::{ImportError, Result};

pub mod et;

use et::{AttributeProto, CollectiveCommType, Node, NodeType, Value};

/// One rank's file, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct RankTrace {
    /// The file, as the user named it.
    pub file: String,
    /// The schema version its GlobalMetadata states.
    pub version: String,
    /// The names of the GlobalMetadata's attributes.
    pub meta_attrs: Vec<String>,
    /// Its nodes, in the file's order.
    pub nodes: Vec<Node>,
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

/// Decode one rank's ET file (its bytes; `file` names it in errors): a `GlobalMetadata`
/// message, then `Node` messages, each after its length as a varint.
pub fn decode(file: &str, buf: &[u8]) -> Result<RankTrace> {
    use prost::Message;
    if buf.starts_with(&[0x1f, 0x8b]) {
        return Err(ImportError::new(
            file,
            "gzip-compressed; decompress it first (gunzip), podsim reads the plain length-delimited ET",
        ));
    }
    let mut pos = 0;
    let mut next = |what: &str| -> Result<Option<&[u8]>> {
        if pos == buf.len() {
            return Ok(None);
        }
        let at = pos;
        let len = varint(buf, &mut pos).ok_or_else(|| {
            ImportError::new(file, format!("a bad length varint before a {what} message; expected a Chakra ET file (length-delimited protobuf)")).byte(at)
        })?;
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| pos.checked_add(l))
            .filter(|&e| e <= buf.len())
            .ok_or_else(|| {
                ImportError::new(file, format!("a {what} message of {len} bytes runs past the end of the file ({} bytes); the file is cut short or not a Chakra ET file", buf.len())).byte(at)
            })?;
        let msg = &buf[pos..end];
        pos = end;
        Ok(Some(msg))
    };
    let Some(meta) = next("GlobalMetadata")? else {
        return Err(ImportError::new(
            file,
            "empty; expected a GlobalMetadata message and then Node messages",
        ));
    };
    let meta = et::GlobalMetadata::decode(meta).map_err(|e| {
        ImportError::new(
            file,
            format!("the first message is not a GlobalMetadata: {e}"),
        )
    })?;
    let mut nodes = Vec::new();
    while let Some(m) = next("Node")? {
        let n = Node::decode(m).map_err(|e| {
            ImportError::new(
                file,
                format!("message {} is not a Chakra Node: {e}", nodes.len() + 2),
            )
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Work {
    /// FLOPs on the matrix unit (or the vector unit for a host op).
    Compute {
        /// The FLOPs.
        flops: u64,
        /// On the vector unit (a host op) rather than the matrix unit.
        vector: bool,
    },
    /// Bytes between HBM and the chip.
    Memory(u64),
    /// A collective on every rank of the trace.
    Collective {
        /// Its kind.
        kind: Kind,
        /// Each rank's bytes (none for a barrier).
        bytes: Option<u64>,
    },
    /// A point-to-point transfer.
    Send {
        /// The sending rank.
        from: u64,
        /// The receiving rank.
        to: u64,
        /// Its bytes.
        bytes: u64,
    },
}

/// One task of the workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// Its name (unique in the workload).
    pub name: String,
    /// What it does.
    pub work: Work,
    /// The rank it runs on (not for collectives and sends).
    pub rank: Option<u64>,
    /// The tasks it waits on, by index (each before it).
    pub after: Vec<usize>,
    /// Where it came from, as a comment in the workload.
    pub note: String,
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

/// The rank of each trace file: the number in `NAME.RANK.et` when every file has one and they
/// are 0..n-1, else the order given. The same file given twice (after resolving links) is an
/// error: each rank's trace is a file of its own.
pub fn rank_order(paths: &[PathBuf]) -> Result<Vec<usize>> {
    let same = |p: &PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
    for (i, p) in paths.iter().enumerate() {
        if let Some(q) = paths[..i].iter().find(|q| same(q) == same(p)) {
            return Err(ImportError::new(
                p.display().to_string(),
                format!(
                    "given twice (also as {}): each rank's trace is a file of its own",
                    q.display()
                ),
            ));
        }
    }
    Ok(ranks(paths))
}

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

/// A trace as a podsim workload: its tasks and what podsim does not honour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    /// The tasks, each after the tasks it waits on.
    pub tasks: Vec<Task>,
    /// What the traces say that podsim does not honour: each file's GlobalMetadata
    /// attributes, then every kind of note once, with how often and an example.
    pub not_honoured: Vec<String>,
}

impl Workload {
    /// The traces (rank r's at index r) as tasks on `chip`: a COMP_NODE's duration_micros
    /// becomes FLOPs at the chip's peak, so it takes that long on it.
    pub fn new(traces: &[RankTrace], chip: &ChipSpec) -> Result<Self> {
        let mut notes = Notes::default();
        let tasks = to_tasks(traces, chip, &mut notes)?;
        let mut not_honoured = Vec::new();
        for t in traces {
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
        Ok(Workload {
            tasks,
            not_honoured,
        })
    }

    /// The workload file (TOML, what `podsim workload` reads): a comment naming the traces,
    /// its name, the `[machine]` table (`machine`, a preset or a system, with `chip` and
    /// `model` added) and every task with a comment of where it came from. A collective runs
    /// on `"all"` chips when the machine has `chips` = ranks, else on chips 0 to ranks - 1.
    pub fn text(
        &self,
        traces: &[RankTrace],
        chip: &ChipSpec,
        mut machine: toml::Table,
        model: &str,
        chips: u64,
    ) -> Result<String> {
        let files: Vec<String> = traces.iter().map(|t| t.file.clone()).collect();
        let n_ranks = traces.len() as u64;
        let name = format!("Chakra trace {} ({n_ranks} ranks)", files[0]);
        let mut text = format!(
            "# podsim's workload for the Chakra trace {} (podsim import chakra): {n_ranks} ranks, rank r on chip r.\n# A node's duration_micros is kept as FLOPs at the {} chip's peak, so it takes that long on it.\nname = {}\n\n",
            files.join(", "),
            chip.name,
            toml::Value::String(name)
        );
        machine.insert("chip".into(), toml::Value::String(chip.name.clone()));
        machine.insert("model".into(), toml::Value::String(model.into()));
        let mut machine_doc = toml::Table::new();
        machine_doc.insert("machine".into(), toml::Value::Table(machine));
        let mt = toml::to_string(&machine_doc).map_err(|e| {
            ImportError::new(files.join(", "), format!("cannot write the machine: {e}")).internal()
        })?;
        text.push_str(&mt);
        let group_all = if n_ranks == chips {
            "\"all\"".to_string()
        } else {
            format!("\"0-{}\"", n_ranks - 1)
        };
        let tasks = &self.tasks;
        for t in tasks {
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
        Ok(text)
    }
}

/// A node's size in bytes from `comm_size` (or `tensor_size`, as Chakra's generator writes
/// sends and receives).
fn size_of(
    file: &str,
    n: &Node,
    attrs: &HashMap<&str, &AttributeProto>,
    keys: &[&str],
) -> Result<u64> {
    for k in keys {
        if let Some(a) = attrs.get(k) {
            return int_of(a)
                .and_then(|v| u64::try_from(v).ok())
                .ok_or_else(|| {
                    ImportError::new(file, "expected a non-negative whole number of bytes")
                        .node(n.id, &n.name)
                        .key(*k)
                });
        }
    }
    Err(ImportError::new(
        file,
        format!("no `{}`; expected its size in bytes", keys.join("` or `")),
    )
    .node(n.id, &n.name))
}

/// The trace's nodes as tasks in an order where every task comes after its dependencies.
fn to_tasks(traces: &[RankTrace], chip: &ChipSpec, notes: &mut Notes) -> Result<Vec<Task>> {
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
                return Err(ImportError::new(
                    file,
                    format!(
                        "node id {} appears twice; expected ids unique in a file",
                        n.id
                    ),
                ));
            }
            let attrs: HashMap<&str, &AttributeProto> =
                n.attr.iter().map(|a| (a.name.as_str(), a)).collect();
            let ty = NodeType::try_from(n.r#type).map_err(|_| {
                ImportError::new(file, format!("type {} is not a Chakra NodeType; expected COMP_NODE, MEM_LOAD_NODE, MEM_STORE_NODE, COMM_COLL_NODE, COMM_SEND_NODE, COMM_RECV_NODE or METADATA_NODE", n.r#type)).node(n.id, &n.name)
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
                    return Err(ImportError::new(file, "INVALID_NODE; expected a node that does work (COMP_NODE, MEM_LOAD_NODE, MEM_STORE_NODE, COMM_COLL_NODE, COMM_SEND_NODE, COMM_RECV_NODE) or a METADATA_NODE").node(n.id, &n.name));
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
                        int_of(a)
                            .and_then(|v| u64::try_from(v).ok())
                            .ok_or_else(|| {
                                ImportError::new(file, "expected a non-negative whole number")
                                    .node(n.id, &n.name)
                                    .key("num_ops")
                            })
                    });
                    let ops = ops.transpose()?.unwrap_or(0);
                    let peak = if cpu {
                        chip.vector.ok_or_else(|| {
                            ImportError::new(file, format!("a host op (is_cpu_op) runs on the chip's vector unit beside the matrix unit, and the {} chip gives no vector rate; choose another --chip", chip.name)).node(n.id, &n.name)
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
                    let ct = attrs
                        .get("comm_type")
                        .and_then(|a| int_of(a))
                        .ok_or_else(|| {
                            ImportError::new(
                                file,
                                "COMM_COLL_NODE without `comm_type`; expected a CollectiveCommType",
                            )
                            .node(n.id, &n.name)
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
                            return Err(ImportError::new(file, format!("comm_type {}: podsim has no such collective; expected ALL_REDUCE, REDUCE, ALL_GATHER, BROADCAST, ALL_TO_ALL, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK or BARRIER", other.map_or("unknown".to_string(), |c| format!("{c:?}")))).node(n.id, &n.name));
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
                            return Err(ImportError::new(file, format!("collective {k} of this rank, and {} has only {}; expected every rank to run the same collectives in the same order", traces[0].file, collectives.len())).node(n.id, &n.name));
                        };
                        if let Work::Collective {
                            kind: k0,
                            bytes: b0,
                        } = &tasks[idx].work
                            && (*k0, *b0) != (kind, bytes)
                        {
                            return Err(ImportError::new(file, format!("{kind} of {} as this rank's collective {k}, where {} has {k0} of {}; expected every rank to run the same collectives in the same order", bytes.map_or("-".into(), |b| Bytes(b).to_string()), traces[0].file, b0.map_or("-".into(), |b| Bytes(b).to_string()))).node(n.id, &n.name));
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
                            ImportError::new(file, format!("missing or not another rank of the trace; expected a rank from 0 to {}", traces.len() - 1)).node(n.id, &n.name).key(peer_key)
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
            return Err(ImportError::new(
                &tr.file,
                format!(
                    "{} collectives, and {} has {}; expected every rank to run the same collectives in the same order",
                    coll_seen[r],
                    traces[0].file,
                    collectives.len()
                ),
            ));
        }
    }
    // Match receives to sends.
    for (key, list) in &recvs {
        let sent = sends.get(key).map_or(&[][..], |v| v.as_slice());
        for (i, &(rank, id, b)) in list.iter().enumerate() {
            let file = &traces[rank].file;
            let Some(&t) = sent.get(i) else {
                return Err(ImportError::new(file, format!("COMM_RECV_NODE from rank {} (tag {}) has no matching COMM_SEND_NODE in {}; expected one send for each receive", key.0, key.2, traces[key.0 as usize].file)).node_id(id));
            };
            if let Work::Send { bytes, .. } = tasks[t].work
                && bytes != b
            {
                return Err(ImportError::new(file, format!("receives {b} bytes from rank {} and its send (`{}`) sends {bytes}; expected the same size", key.0, tasks[t].name)).node_id(id));
            }
            targets[rank].insert(id, Target::Task(t));
        }
    }
    for (key, list) in &sends {
        let got = recvs.get(key).map_or(0, Vec::len);
        if list.len() > got {
            let t = &tasks[list[got]];
            return Err(ImportError::new(
                &traces[key.0 as usize].file,
                format!(
                    "`{}`: COMM_SEND_NODE to rank {} (tag {}) has no matching COMM_RECV_NODE in {}; expected one receive for each send",
                    t.name, key.1, key.2, traces[key.1 as usize].file
                ),
            ));
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
) -> Result<Vec<usize>> {
    let direct = |n: &Node| -> Result<Vec<u64>> {
        let mut ids = Vec::new();
        for &d in n.data_deps.iter().chain(&n.ctrl_deps) {
            if !by_id[rank].contains_key(&d) {
                return Err(ImportError::new(file, format!("depends on node {d}, which is not in the file; expected the ids of nodes of the same rank")).node(n.id, &n.name));
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
            return Err(
                ImportError::new(file, "its dependencies lead back to it; expected a DAG")
                    .node(id, &node.name),
            );
        }
        stack.push((id, true));
        for d in ds {
            if !matches!(targets[rank].get(&d), Some(Target::Task(_)))
                && !memo[rank].contains_key(&d)
            {
                if open.contains(&d) {
                    return Err(ImportError::new(
                        file,
                        "its dependencies lead back to it; expected a DAG",
                    )
                    .node_id(d));
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
fn order(tasks: Vec<Task>, traces: &[RankTrace]) -> Result<Vec<Task>> {
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
        return Err(ImportError::new(
            traces
                .iter()
                .map(|t| t.file.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            format!(
                "the ranks' dependencies, collectives and sends form a cycle (through {}); expected every rank to run its collectives in the same order",
                stuck.join(", ")
            ),
        ));
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

/// A Chakra import as podsim ran it: the workload file and its run, handed back by the caller
/// that ran it.
#[derive(Debug, Clone)]
pub struct ChakraRun<'a> {
    /// The trace's ranks.
    pub ranks: u64,
    /// The machine, as the user named it.
    pub machine: &'a str,
    /// The workload file (TOML).
    pub workload_toml: &'a str,
    /// Where the workload file is (what the command names).
    pub workload_ref: &'a str,
    /// The workload as podsim read it back.
    pub spec: &'a podsim_system::workload::WorkloadSpec,
    /// Its run.
    pub result: &'a podsim_system::workload::WorkloadResult,
    /// The model that ran it.
    pub model: podsim_collective::ModelKind,
    /// The machine's chips.
    pub chips: u64,
    /// Every attribute podsim does not honour.
    pub not_honoured: &'a [String],
}

impl ChakraRun<'_> {
    /// The `podsim workload` command that runs the workload file.
    pub fn command(&self) -> String {
        format!("podsim workload {}", self.workload_ref)
    }

    /// The import as `podsim import chakra --json` prints it.
    pub fn json(&self) -> serde_json::Value {
        let run = podsim_system::workload::WorkloadOutput::new(
            self.spec,
            self.result,
            self.model,
            self.chips,
        );
        serde_json::json!({
            "ranks": self.ranks,
            "machine": self.machine,
            "workload": self.workload_toml,
            "command": self.command(),
            "run": serde_json::to_value(&run).unwrap_or_else(|e| serde_json::Value::String(format!("cannot serialize the result: {e}"))),
            "not_honoured": self.not_honoured,
        })
    }

    /// The import as `podsim import chakra` prints it: the workload file (unless
    /// `workload_written` elsewhere), the command, the run's summary and a line per attribute
    /// podsim does not honour, as TOML comments.
    pub fn text(&self, workload_written: bool) -> String {
        let mut out = String::new();
        if !workload_written {
            out.push_str(self.workload_toml);
        }
        out.push_str(&format!("# run it: {}\n", self.command()));
        let mut rows = vec![(
            "# machine".to_string(),
            vec![format!(
                "{} ({} chips of {}), {} model",
                self.machine,
                self.chips,
                self.spec.chip.name,
                self.model.name()
            )],
        )];
        for (k, v) in self.result.summary_rows() {
            rows.push((format!("# {k}"), v));
        }
        out.push_str(&podsim_units::table::render(&rows));
        for n in self.not_honoured {
            out.push_str(&format!("# not honoured: {n}\n"));
        }
        out
    }
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
