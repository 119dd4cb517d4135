//! DOJO interface processors as memory: DMA engines between a DIP's HBM and node SRAM, and
//! the PCIe links to the hosts (dojo-microarchitecture.txt, "DOJO System Topology",
//! "Communication Mechanisms": "The interface processors have DMA engines which can sequence
//! transfers between the shared DRAM and various SRAM locations. These DMA engines can service
//! contiguous or strided transfers up to four dimensions"; "every DIP connects to an x86 host
//! system using a PCIe x16 Gen4 channel. Up to 5 DIPs can be connected to the same host, with a
//! total bandwidth of 160 GB/s per host").
//!
//! # The DMA engine
//! A descriptor names a region of the DIP's HBM as up to four nested dimensions (elements per
//! dimension and the byte stride between consecutive elements of each, innermost first) and a
//! contiguous region of one node's SRAM. The engine walks the dimensions in order (the
//! [`runs`] of contiguous bytes, merged where a dimension is dense), reads HBM in aligned
//! [`BURST_BYTES`] bursts (a run that starts or ends inside a burst reads all of it: short or
//! misaligned runs waste HBM bandwidth) and packs the gathered bytes into 64-byte packets to
//! the node; a write goes the other way (whole bursts are written; the engine masks the
//! bytes it does not own).
//!
//! Timing is a two-stage pipeline: the HBM reads at [`HBM_BYTES_PER_S`] and the packets over
//! the mesh on the flow model (the DIP's link into the edge router on the node's row, or the
//! nearest row of its die edge, 45 GB/s; then X-then-Y to the node). The DIP's 900 GB/s into
//! the mesh is its 20 edge links together: one node's DMA uses one of them, DMAs to nodes on
//! many rows use them all. The transfer ends when both stages are done: `max(hbm + one
//! packet's network time, one burst's read + network)`.
//!
//! # Sources and assumptions
//! * HBM: 32 GB per DIP (the seed). Its bandwidth, 800 GB/s, is from Tesla's public DOJO
//!   system talk at Hot Chips 34 (2022, the DIP slide: "32GB HBM, 800GB/s"); the seed gives
//!   none.
//! * Bursts of 64 bytes: the size of a DOJO packet and of a node SRAM access (the seed's
//!   "64-B" loads and stores); an assumption for the HBM side.
//! * PCIe Gen4 x16: 32 GB/s each way per DIP (PCI-SIG: 16 GT/s x 16 lanes, 128b/130b), the
//!   topology's DIP-to-host link.

use podsim_net::NetworkModel;
use podsim_routing::Shortcut;
use podsim_topology::{DIP_HBM, Dojo, DojoNode, NODE_SRAM, NodeId};
use podsim_units::{Bytes, SimTime};

/// A DIP's HBM bandwidth, bytes/s (Hot Chips 34, the DIP slide; the seed gives none).
pub const HBM_BYTES_PER_S: u64 = podsim_topology::DIP_HBM_BYTES_PER_S;
/// The HBM access granularity of the DMA engine, bytes (an assumption: a DOJO packet).
pub const BURST_BYTES: u64 = 64;
/// Dimensions a descriptor may have (the seed: "up to four dimensions").
pub const MAX_DIMS: usize = 4;
/// Bytes of one DOJO packet's payload.
const PACKET_BYTES: u64 = 64;

/// Which way the data goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// HBM to node SRAM (gather).
    Read,
    /// Node SRAM to HBM (scatter).
    Write,
}

/// One DMA descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DmaSpec {
    /// The interface processor (its index on the plane).
    pub dip: u32,
    /// The node, as plane coordinates.
    pub node: (u32, u32),
    /// Bytes per element.
    pub element_bytes: u64,
    /// Elements per dimension, innermost first (1 to 4 dimensions).
    pub shape: Vec<u64>,
    /// Bytes between consecutive elements of each dimension in HBM, innermost first (one per
    /// dimension).
    pub strides: Vec<u64>,
    /// The region's first byte in HBM.
    pub offset: u64,
    /// Gather into SRAM or scatter into HBM.
    pub direction: Direction,
}

/// Why a descriptor cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DmaError(pub String);

fn err<T>(s: impl Into<String>) -> Result<T, DmaError> {
    Err(DmaError(s.into()))
}

impl DmaSpec {
    /// A contiguous transfer of `bytes` from HBM offset 0 to `node`.
    pub fn contiguous(dip: u32, node: (u32, u32), bytes: u64) -> Self {
        DmaSpec {
            dip,
            node,
            element_bytes: bytes.max(1),
            shape: vec![1],
            strides: vec![bytes.max(1)],
            offset: 0,
            direction: Direction::Read,
        }
    }

    /// Bytes moved: elements x element size.
    pub fn bytes(&self) -> u64 {
        self.shape
            .iter()
            .try_fold(self.element_bytes, |a, &n| a.checked_mul(n))
            .unwrap_or(u64::MAX)
    }

    /// Check the descriptor: 1 to 4 dimensions, one stride each, no empty dimension, the
    /// region inside the DIP's 32 GB and the data inside the node's 1.25 MB SRAM.
    pub fn check(&self) -> Result<(), DmaError> {
        let n = self.shape.len();
        if n == 0 || n > MAX_DIMS {
            return err(format!(
                "--shape: {n} dimensions; the DMA engines take 1 to {MAX_DIMS}"
            ));
        }
        if self.strides.len() != n {
            return err(format!(
                "--stride: {} strides for {n} dimensions; give one per dimension, innermost first",
                self.strides.len()
            ));
        }
        if self.element_bytes == 0 {
            return err("--element-bytes: at least one byte");
        }
        if let Some(i) = self.shape.iter().position(|&s| s == 0) {
            return err(format!("--shape: dimension {i} has no element"));
        }
        let bytes = self.bytes();
        if bytes > NODE_SRAM.0 {
            return err(format!(
                "{bytes} bytes do not fit a node's {} B of SRAM",
                NODE_SRAM.0
            ));
        }
        // The last byte touched: offset + sum((n_i - 1) stride_i) + element - 1.
        let mut last = Some(self.offset);
        for (&s, &st) in self.shape.iter().zip(&self.strides) {
            last = last.and_then(|l| (s - 1).checked_mul(st).and_then(|x| l.checked_add(x)));
        }
        match last.and_then(|l| l.checked_add(self.element_bytes)) {
            Some(end) if end <= DIP_HBM.0 => Ok(()),
            _ => err(format!(
                "the region runs past the DIP's {} GB of HBM",
                DIP_HBM.0 / 1_000_000_000
            )),
        }
    }
}

/// The descriptor's contiguous runs in HBM, in the order the engine walks them: (first byte,
/// length). Adjacent dimensions that are dense (stride = the inner dimension's extent) merge
/// into one run. Call [`DmaSpec::check`] first.
pub fn runs(s: &DmaSpec) -> Vec<(u64, u64)> {
    // Merge the innermost dimensions while they are dense.
    let mut run = s.element_bytes;
    let mut first = 0;
    if s.strides[0] == s.element_bytes {
        run = s.element_bytes * s.shape[0];
        first = 1;
        while first < s.shape.len() && s.strides[first] == run {
            run *= s.shape[first];
            first += 1;
        }
    }
    let outer: Vec<(u64, u64)> = s.shape[first..]
        .iter()
        .copied()
        .zip(s.strides[first..].iter().copied())
        .collect();
    let count: u64 = outer.iter().map(|&(n, _)| n).product();
    let mut out = Vec::with_capacity(count as usize);
    let mut idx = vec![0u64; outer.len()];
    for _ in 0..count {
        let addr = s.offset
            + idx
                .iter()
                .zip(&outer)
                .map(|(&i, &(_, st))| i * st)
                .sum::<u64>();
        out.push((addr, run));
        for (d, i) in idx.iter_mut().enumerate() {
            *i += 1;
            if *i < outer[d].0 {
                break;
            }
            *i = 0;
        }
    }
    out
}

/// HBM bursts the runs touch (each run's aligned bursts; a burst shared by two runs is read
/// twice, as the engine issues runs one by one).
pub fn bursts(runs: &[(u64, u64)]) -> u64 {
    runs.iter()
        .map(|&(a, l)| (a + l).div_ceil(BURST_BYTES) - a / BURST_BYTES)
        .sum()
}

/// Gather the descriptor's bytes out of `hbm` (a read: what lands in SRAM, in order).
pub fn gather(s: &DmaSpec, hbm: &[u8]) -> Result<Vec<u8>, DmaError> {
    s.check()?;
    let mut out = Vec::with_capacity(s.bytes() as usize);
    for (a, l) in runs(s) {
        let (a, l) = (a as usize, l as usize);
        let Some(src) = hbm.get(a..a + l) else {
            return err(format!("byte {} is past the {} B given", a + l, hbm.len()));
        };
        out.extend_from_slice(src);
    }
    Ok(out)
}

/// Scatter `sram` (the descriptor's bytes, in order) into `hbm` (a write).
pub fn scatter(s: &DmaSpec, sram: &[u8], hbm: &mut [u8]) -> Result<(), DmaError> {
    s.check()?;
    if sram.len() as u64 != s.bytes() {
        return err(format!(
            "{} bytes given for a {}-byte descriptor",
            sram.len(),
            s.bytes()
        ));
    }
    let mut at = 0usize;
    for (a, l) in runs(s) {
        let (a, l) = (a as usize, l as usize);
        let n = hbm.len();
        let Some(dst) = hbm.get_mut(a..a + l) else {
            return err(format!("byte {} is past the {n} B given", a + l));
        };
        dst.copy_from_slice(&sram[at..at + l]);
        at += l;
    }
    Ok(())
}

/// What a DMA transfer measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DmaResult {
    /// From the descriptor's start to the last byte in place, seconds.
    pub time_s: f64,
    /// Bytes moved.
    pub bytes: u64,
    /// Contiguous runs in HBM.
    pub runs: u64,
    /// HBM bursts read or written.
    pub hbm_bursts: u64,
    /// The HBM stage alone, seconds.
    pub hbm_time_s: f64,
    /// The network stage alone (flow model), seconds.
    pub network_time_s: f64,
    /// 64-byte packets on the mesh.
    pub packets: u64,
    /// Bytes moved over HBM bytes touched.
    pub hbm_efficiency: f64,
}

fn dip_of(d: &Dojo, dip: u32) -> Result<(), DmaError> {
    if d.dips() == 0 {
        return err(format!(
            "{} has no DIPs: DMA needs a system with its interface processors (dojo:system=RxC)",
            d.spec().label
        ));
    }
    if dip >= d.dips() {
        return err(format!(
            "--dip {dip}: the plane has DIPs 0 to {}",
            d.dips() - 1
        ));
    }
    Ok(())
}

/// The network time of `bytes` from DIP `dip` to router `node` (or back), alone on the flow
/// model, seconds.
fn net_time(d: &Dojo, dip: u32, node: (u32, u32), bytes: u64, dir: Direction) -> f64 {
    let (a, b) = (d.id(DojoNode::Dip(dip)), d.router(node.0, node.1));
    let (src, dst) = if dir == Direction::Read {
        (a, b)
    } else {
        (b, a)
    };
    flows_end_s(d, &[(src, dst, bytes)]).unwrap_or(f64::INFINITY)
}

/// When the last of `flows` (source, sink, bytes), all starting at once alone on the flow
/// model, ends: seconds.
fn flows_end_s(d: &Dojo, flows: &[(NodeId, NodeId, u64)]) -> Result<f64, DmaError> {
    let mut m = podsim_system::machine::dojo_flow_model(d, Shortcut::Never);
    for &(src, dst, bytes) in flows {
        m.send(SimTime::ZERO, src, dst, Bytes(bytes), 0)
            .map_err(|e| DmaError(e.to_string()))?;
    }
    let mut end = 0u64;
    while let Some(t) = m.next_completion() {
        for c in m.advance(t) {
            end = end.max(c.end.as_ps());
        }
    }
    Ok(end as f64 * 1e-12)
}

/// Time one descriptor on `d` (a plane with DIPs).
pub fn dma(d: &Dojo, s: &DmaSpec) -> Result<DmaResult, DmaError> {
    s.check()?;
    dip_of(d, s.dip)?;
    if s.node.0 >= d.width() || s.node.1 >= d.height() {
        return err(format!(
            "node {},{} is off the {}x{} mesh",
            s.node.0,
            s.node.1,
            d.width(),
            d.height()
        ));
    }
    let rs = runs(s);
    let bytes = s.bytes();
    let hbm_bursts = bursts(&rs);
    let packets = bytes.div_ceil(PACKET_BYTES);
    let hbm_time_s = (hbm_bursts * BURST_BYTES) as f64 / HBM_BYTES_PER_S as f64;
    let burst_s = BURST_BYTES as f64 / HBM_BYTES_PER_S as f64;
    let network_time_s = net_time(d, s.dip, s.node, packets * PACKET_BYTES, s.direction);
    let one_packet_s = net_time(d, s.dip, s.node, PACKET_BYTES, s.direction);
    let time_s = (hbm_time_s + one_packet_s).max(burst_s + network_time_s);
    Ok(DmaResult {
        time_s,
        bytes,
        runs: rs.len() as u64,
        hbm_bursts,
        hbm_time_s,
        network_time_s,
        packets,
        hbm_efficiency: bytes as f64 / (hbm_bursts * BURST_BYTES) as f64,
    })
}

/// What a host upload measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HostResult {
    /// The host.
    pub host: u32,
    /// DIPs the data was spread over.
    pub dips: u32,
    /// Bytes in all.
    pub bytes: u64,
    /// Until the last DIP has its share, seconds.
    pub time_s: f64,
    /// Bytes over time.
    pub bandwidth_bytes_per_s: f64,
}

/// Host `host` writes `bytes` into the HBM of its first `dips` DIPs (an equal share each, at
/// once), on the flow model: each share crosses its DIP's PCIe Gen4 x16 link.
pub fn host_upload(d: &Dojo, host: u32, bytes: u64, dips: u32) -> Result<HostResult, DmaError> {
    if d.dips() == 0 {
        return err(format!(
            "{} has no DIPs or hosts (dojo:system=RxC has them)",
            d.spec().label
        ));
    }
    if host >= d.hosts() {
        return err(format!(
            "--host {host}: the plane has hosts 0 to {}",
            d.hosts() - 1
        ));
    }
    let mine: Vec<u32> = (0..d.dips())
        .filter(|&i| i / podsim_topology::DIPS_PER_HOST == host)
        .collect();
    if dips == 0 || dips as usize > mine.len() {
        return err(format!(
            "--dips {dips}: host {host} has {} DIPs",
            mine.len()
        ));
    }
    if bytes == 0 || bytes > u64::from(dips) * DIP_HBM.0 {
        return err(format!(
            "--bytes {bytes}: from 1 byte to the DIPs' {} GB of HBM",
            u64::from(dips) * DIP_HBM.0 / 1_000_000_000
        ));
    }
    let h = d.id(DojoNode::Host(host));
    let share = bytes.div_ceil(u64::from(dips));
    let flows: Vec<(NodeId, NodeId, u64)> = mine[..dips as usize]
        .iter()
        .map(|&i| (h, d.id(DojoNode::Dip(i)), share))
        .collect();
    let time_s = flows_end_s(d, &flows)?;
    Ok(HostResult {
        host,
        dips,
        bytes,
        time_s,
        bandwidth_bytes_per_s: bytes as f64 / time_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use podsim_topology::DojoSpec;

    fn sys() -> Dojo {
        Dojo::new(DojoSpec::system(1, 1)).unwrap()
    }

    /// A 4-D strided gather equals the loop nest written out by hand, and a scatter puts every
    /// byte back where the gather found it.
    #[test]
    fn strided_four_d_gather_and_scatter() {
        // 3 x 2 x 4 x 5 elements of 2 bytes; strides 6, 40, 200, 1000 bytes (not dense).
        let s = DmaSpec {
            dip: 0,
            node: (0, 0),
            element_bytes: 2,
            shape: vec![3, 2, 4, 5],
            strides: vec![6, 40, 200, 1000],
            offset: 10,
            direction: Direction::Read,
        };
        let hbm: Vec<u8> = (0..6000u32).map(|i| (i * 7 % 251) as u8).collect();
        let got = gather(&s, &hbm).unwrap();
        let mut want = Vec::new();
        for l in 0..5u64 {
            for k in 0..4u64 {
                for j in 0..2u64 {
                    for i in 0..3u64 {
                        let a = (10 + i * 6 + j * 40 + k * 200 + l * 1000) as usize;
                        want.extend_from_slice(&hbm[a..a + 2]);
                    }
                }
            }
        }
        assert_eq!(got, want);
        assert_eq!(runs(&s).len(), 120);
        let mut back = vec![0u8; 6000];
        scatter(&s, &got, &mut back).unwrap();
        for (a, _) in runs(&s) {
            let a = a as usize;
            assert_eq!(back[a..a + 2], hbm[a..a + 2]);
        }
    }

    /// Dense dimensions merge: a 64 x 32 block of 4-byte elements with a row stride of
    /// 256 bytes is one 8 KiB run, read in 128 bursts.
    #[test]
    fn dense_dimensions_merge() {
        let s = DmaSpec {
            shape: vec![64, 32],
            strides: vec![4, 256],
            element_bytes: 4,
            ..DmaSpec::contiguous(0, (0, 0), 1)
        };
        assert_eq!(runs(&s), vec![(0, 8192)]);
        assert_eq!(bursts(&runs(&s)), 128);
    }

    /// Contiguous 256 KiB to a node one hop from DIP 0's edge: the network stage binds (the
    /// DIP's edge link on the node's row, 900 GB/s / 20 = 45 GB/s) and the HBM stage is 4096
    /// bursts at 800 GB/s. By hand: HBM 262,144 / 800e9 = 327.68 ns; network 262,144 / 45e9 =
    /// 5,825.4 ns plus the path's latency (100 ns + 0.5 ns); the total is the network stage
    /// plus one 80 ps burst.
    #[test]
    fn contiguous_is_network_bound() {
        let d = sys();
        let r0 = d.dip_router(0);
        let Some(DojoNode::Router { x, y }) = d.node(r0) else {
            panic!("a DIP's router is a router")
        };
        let nx = if x + 1 < d.width() { x + 1 } else { x - 1 };
        let r = dma(&d, &DmaSpec::contiguous(0, (nx, y), 256 << 10)).unwrap();
        assert_eq!(r.hbm_bursts, 4096);
        assert!((r.hbm_time_s - 327.68e-9).abs() < 1e-12);
        assert!(
            (r.network_time_s - (262_144.0 / 45e9 + 100.5e-9)).abs() < 1e-12,
            "{r:?}"
        );
        assert!((r.time_s - (r.network_time_s + 80e-12)).abs() < 1e-15);
        assert_eq!(r.hbm_efficiency, 1.0);
    }

    /// A gather of 4-byte elements 64 bytes apart touches a whole burst per element: 1/16 of
    /// what HBM reads is used. By hand: 16,384 elements, 16,384 bursts, 1 MiB at 800 GB/s =
    /// 1,310.72 ns; 64 KiB to the node at 45 GB/s = 1,456.4 ns: the network still binds, by
    /// little. At 2-byte elements 128 bytes apart (32,768 bursts, 2,621.44 ns against the same
    /// network time) HBM binds.
    #[test]
    fn sparse_gathers_waste_hbm() {
        let d = sys();
        let s = DmaSpec {
            element_bytes: 4,
            shape: vec![16384],
            strides: vec![64],
            ..DmaSpec::contiguous(0, (0, 0), 1)
        };
        let r = dma(&d, &s).unwrap();
        assert_eq!(r.hbm_bursts, 16384);
        assert!((r.hbm_efficiency - 1.0 / 16.0).abs() < 1e-12);
        assert!((r.hbm_time_s - 1310.72e-9).abs() < 1e-15);
        assert!(r.hbm_time_s < r.network_time_s);
        let s2 = DmaSpec {
            element_bytes: 2,
            shape: vec![32768],
            strides: vec![128],
            ..s
        };
        let r2 = dma(&d, &s2).unwrap();
        assert_eq!(r2.hbm_bursts, 32768);
        assert!((r2.hbm_time_s - 2621.44e-9).abs() < 1e-15);
        assert!(r2.hbm_time_s > r2.network_time_s);
        // HBM, then the last packet's trip: node 0,0 is on DIP 0's edge, so one link: 64 B at
        // 45 GB/s plus its 100 ns.
        assert!(
            (r2.time_s - (r2.hbm_time_s + 64.0 / 45e9 + 100e-9)).abs() < 1e-12,
            "{r2:?}"
        );
    }

    /// Bad descriptors are refused with the reason.
    #[test]
    fn refusals() {
        let d = sys();
        let base = DmaSpec::contiguous(0, (0, 0), 64);
        let five = DmaSpec {
            shape: vec![1; 5],
            strides: vec![1; 5],
            ..base.clone()
        };
        assert!(dma(&d, &five).unwrap_err().0.contains("1 to 4"));
        let big = DmaSpec::contiguous(0, (0, 0), 2 << 20);
        assert!(dma(&d, &big).unwrap_err().0.contains("SRAM"));
        let far = DmaSpec {
            offset: DIP_HBM.0,
            ..base.clone()
        };
        assert!(dma(&d, &far).unwrap_err().0.contains("HBM"));
        let huge = DmaSpec {
            shape: vec![u64::MAX, 2],
            strides: vec![1, 1],
            element_bytes: 1,
            ..base.clone()
        };
        assert!(dma(&d, &huge).is_err());
        let tile = Dojo::new(DojoSpec::tile()).unwrap();
        assert!(dma(&tile, &base).unwrap_err().0.contains("no DIPs"));
        assert!(dma(&d, &DmaSpec { dip: 99, ..base }).is_err());
    }

    /// Five DIPs' PCIe links together: 160 GB/s per host (the seed), from the modelled links.
    #[test]
    fn host_takes_160_gb_per_s_over_five_dips() {
        let d = sys();
        let r = host_upload(&d, 0, 16 << 30, 5).unwrap();
        assert!(
            (r.bandwidth_bytes_per_s / 160e9 - 1.0).abs() < 1e-3,
            "{r:?}"
        );
        let one = host_upload(&d, 0, 1 << 30, 1).unwrap();
        assert!(
            (one.bandwidth_bytes_per_s / 32e9 - 1.0).abs() < 1e-3,
            "{one:?}"
        );
        assert!(host_upload(&d, 0, 1, 6).is_err());
    }
}
