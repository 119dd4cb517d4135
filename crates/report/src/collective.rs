//! Collectives: the transfers of a run as a trace, a sweep's bus bandwidth as plot points.

use serde_json::json;

use crate::Trace;

/// Add the transfers of one collective run to a trace: a process per sending rank (process id
/// `pid_offset` + rank, named `label` rank), one thread (its network endpoint), a complete
/// event per transfer from its send to its last byte's arrival.
pub fn add_transfers(t: &mut Trace, log: &podsim_net::Recording, pid_offset: u64, label: &str) {
    for c in &log.kept {
        let pid = pid_offset + c.src.0;
        t.process(pid, format!("{label}rank {}", c.src.0));
        t.thread(pid, 0, "network endpoint");
        t.complete(
            pid,
            0,
            &format!("to {}", c.dst.0),
            c.start,
            c.end - c.start,
            json!({"dst": c.dst.0, "bytes": c.bytes.0, "op": c.tag}),
        );
    }
    t.add_cut(log.cut);
}

/// The transfers of a collective run as a trace (see [`add_transfers`]), `about` its context,
/// at most `limit` events.
pub fn transfers_trace(
    log: &podsim_net::Recording,
    about: &[(&str, serde_json::Value)],
    limit: usize,
) -> Trace {
    let mut t = Trace::new(limit);
    for (k, v) in about {
        t.about(*k, v.clone());
    }
    add_transfers(&mut t, log, 0, "");
    t
}

/// The points of a bus-bandwidth plot from a collective sweep's CSV rows (bytes, time,
/// algbw, busbw, lower bound, ..., error): (bytes, busbw GB/s, the bound's busbw GB/s: busbw
/// x time / lower bound), failed rows left out.
pub fn busbw_points(rows: &[Vec<String>]) -> Vec<(f64, f64, Option<f64>)> {
    rows.iter()
        .filter(|f| f.len() == 8 && f[7].is_empty())
        .filter_map(|f| {
            let n = |i: usize| f[i].parse::<f64>().ok();
            let (bytes, time, bus, bound) = (n(0)?, n(1)?, n(3)?, n(4)?);
            let bound_bus = (bound > 0.0 && time > 0.0).then(|| bus * time / bound / 1e9);
            Some((bytes, bus / 1e9, bound_bus))
        })
        .collect()
}
