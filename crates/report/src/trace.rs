//! Chrome trace-event JSON, which the Perfetto UI (ui.perfetto.dev) and chrome://tracing open:
//! a process per chip (or router), a thread per resource, complete events (`"ph": "X"`) for
//! tasks and transfers with `ts` and `dur` in microseconds, and counters (`"ph": "C"`) for
//! quantities over time such as link utilisation.
//!
//! Large runs stay usable: a trace holds at most `limit` events; the events past the limit are
//! counted, not kept, and the file says how many were cut (in `otherData` and in an instant
//! event at the end).
//!
//! Complete events on one track (one `(pid, tid)`) must nest for Perfetto to draw them: any two
//! are disjoint (touching is fine) or one lies inside the other. Callers record what their
//! resources did, and a resource may run several things at once (packets in flight, transfers
//! sharing a DMA engine), so [`Trace::to_json`] splits each thread into lanes: it sorts the
//! thread's complete events by (start, longer first) and puts each on the first lane where it
//! nests inside the innermost open event or starts after that lane's open events end (a greedy
//! assignment on the exact picosecond times, not the microseconds written). Lane 0 keeps the
//! thread's `tid`; lane `k` (k >= 1) becomes a new thread of the same process, named after the
//! original with the suffix ` (k+1)` (`"DMA (2)"`; an unnamed thread `tid` gives
//! `"thread tid (2)"`). Its `tid` is the next one free in that process counting up from one past
//! the largest `tid` the process uses (named threads and events), given in order of (original
//! `tid`, lane), so it never collides with a thread the caller made. In a process that gained
//! lanes, every thread gets `thread_sort_index` metadata (its rank in (original `tid`, lane)
//! order), so each thread's lanes sit right under it; processes without lanes are written as
//! before. Counters and instant events are untouched, lanes do not count towards the limit, and
//! the output is deterministic. [`check_nesting`] checks a written trace.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use podsim_units::{SimDuration, SimTime};
use serde_json::{Value, json};

/// A trace being built.
#[derive(Debug, Clone)]
pub struct Trace {
    limit: usize,
    events: Vec<Event>,
    cut: u64,
    processes: BTreeMap<u64, String>,
    threads: BTreeMap<(u64, u64), String>,
    end: SimTime,
    about: BTreeMap<String, Value>,
}

/// An event kept, with the exact span of a complete event for the lane assignment.
#[derive(Debug, Clone)]
struct Event {
    json: Value,
    span: Option<Span>,
}

/// A complete event's track and its start and end in picoseconds.
#[derive(Debug, Clone, Copy)]
struct Span {
    pid: u64,
    tid: u64,
    start: u64,
    end: u64,
}

/// Lanes for intervals `(start, end)` (end >= start) so that the intervals on one lane nest:
/// any two are disjoint (touching allowed) or one contains the other. Intervals are taken by
/// (start, longer first, index), each onto the first lane where it fits inside the innermost
/// open interval or starts after the lane's open intervals end. Returns each interval's lane.
pub(crate) fn assign_lanes(spans: &[(u64, u64)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| (spans[i].0, std::cmp::Reverse(spans[i].1), i));
    // Each lane's open intervals, outermost first: their ends, non-increasing.
    let mut lanes: Vec<Vec<u64>> = Vec::new();
    let mut lane_of = vec![0; spans.len()];
    for i in order {
        let (start, end) = spans[i];
        let mut placed = None;
        for (l, open) in lanes.iter_mut().enumerate() {
            // Later intervals start no earlier, so what ends by `start` stays closed.
            while open.last().is_some_and(|&e| e <= start) {
                open.pop();
            }
            if open.last().is_none_or(|&e| end <= e) {
                open.push(end);
                placed = Some(l);
                break;
            }
        }
        lane_of[i] = placed.unwrap_or_else(|| {
            lanes.push(vec![end]);
            lanes.len() - 1
        });
    }
    lane_of
}

/// Check that the complete events (`"ph": "X"`) of a Chrome trace-event JSON value nest on
/// every track (`(pid, tid)`): any two on one track are disjoint or one lies inside the other.
/// Two events that only touch (one ends where the next starts) are fine. Times are compared in
/// whole picoseconds, `ts * 1e6` and `dur * 1e6` rounded, so the microseconds' rounding cannot
/// make a false overlap.
///
/// The error names the first two partly overlapping events of the first track (in order of
/// first appearance) that has any, with their name, `ts`, `dur`, `pid` and `tid`; or the first
/// complete event without a numeric `ts` or a non-negative `dur`, or a value with no
/// `traceEvents` array.
pub fn check_nesting(trace: &Value) -> Result<(), String> {
    let events = trace["traceEvents"]
        .as_array()
        .ok_or("the trace has no traceEvents array")?;
    let ps = |v: &Value| v.as_f64().map(|x| (x * 1e6).round());
    let mut track_of: HashMap<(String, String), usize> = HashMap::new();
    let mut tracks: Vec<Vec<(i128, i128, usize)>> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if e["ph"] != "X" {
            continue;
        }
        let (Some(ts), Some(dur)) = (ps(&e["ts"]), ps(&e["dur"])) else {
            return Err(format!("event {i} ({e}) has no numeric ts and dur"));
        };
        if !ts.is_finite() || !dur.is_finite() || dur < 0.0 {
            return Err(format!("event {i} ({e}) has a bad ts or dur"));
        }
        let key = (e["pid"].to_string(), e["tid"].to_string());
        let next = tracks.len();
        let t = *track_of.entry(key).or_insert(next);
        if t == next {
            tracks.push(Vec::new());
        }
        tracks[t].push((ts as i128, ts as i128 + dur as i128, i));
    }
    let show = |i: usize| {
        let e = &events[i];
        format!(
            "{} (ts {}, dur {}, pid {}, tid {})",
            e["name"], e["ts"], e["dur"], e["pid"], e["tid"]
        )
    };
    for mut t in tracks {
        t.sort_by_key(|&(s, e, i)| (s, std::cmp::Reverse(e), i));
        // The open events, outermost first: each lies inside the one below it.
        let mut open: Vec<(i128, i128, usize)> = Vec::new();
        for ev in t {
            while open.last().is_some_and(|o| o.1 <= ev.0) {
                open.pop();
            }
            if let Some(o) = open.last().filter(|o| ev.1 > o.1) {
                return Err(format!(
                    "events partly overlap on one track: {} and {}",
                    show(o.2),
                    show(ev.2)
                ));
            }
            open.push(ev);
        }
    }
    Ok(())
}

/// Where [`Trace::lanes`] puts the events.
struct Lanes {
    /// Each kept event's new `tid`, if it moved off its thread's lane 0.
    tid: Vec<Option<u64>>,
    /// The lanes' thread names by (pid, tid).
    names: BTreeMap<(u64, u64), String>,
    /// The sort index of every thread of a process that gained lanes.
    sort_index: BTreeMap<(u64, u64), u64>,
}

/// Microseconds of a simulated instant, as trace-event JSON counts time.
fn us(t: SimTime) -> f64 {
    t.as_ps() as f64 / 1e6
}

impl Trace {
    /// An empty trace that keeps at most `limit` events (names of processes and threads do not
    /// count).
    pub fn new(limit: usize) -> Self {
        Trace {
            limit,
            events: Vec::new(),
            cut: 0,
            processes: BTreeMap::new(),
            threads: BTreeMap::new(),
            end: SimTime::ZERO,
            about: BTreeMap::new(),
        }
    }

    /// Name process `pid` (a chip, a router).
    pub fn process(&mut self, pid: u64, name: impl Into<String>) {
        self.processes.insert(pid, name.into());
    }

    /// Name thread `tid` of process `pid` (a resource: matrix unit, DMA, network endpoint).
    pub fn thread(&mut self, pid: u64, tid: u64, name: impl Into<String>) {
        self.threads.insert((pid, tid), name.into());
    }

    /// Record a fact about the run (model, topology, command) in the file's `otherData`.
    pub fn about(&mut self, key: impl Into<String>, value: Value) {
        self.about.insert(key.into(), value);
    }

    fn push(&mut self, json: Value, span: Option<Span>, at: SimTime) {
        self.end = self.end.max(at);
        if self.events.len() < self.limit {
            self.events.push(Event { json, span });
        } else {
            self.cut += 1;
        }
    }

    /// A complete event: `name` on thread `tid` of `pid` from `start` for `dur`, with `args`
    /// (an object, or null for none).
    pub fn complete(
        &mut self,
        pid: u64,
        tid: u64,
        name: &str,
        start: SimTime,
        dur: SimDuration,
        args: Value,
    ) {
        let mut e = json!({
            "ph": "X", "pid": pid, "tid": tid, "name": name,
            "ts": us(start), "dur": dur.as_ps() as f64 / 1e6,
        });
        if !args.is_null() {
            e["args"] = args;
        }
        let span = Span {
            pid,
            tid,
            start: start.as_ps(),
            end: (start + dur).as_ps(),
        };
        self.push(e, Some(span), start + dur);
    }

    /// A counter sample: series `name` of process `pid` takes `values` (series name -> value)
    /// from `at` on.
    pub fn counter(&mut self, pid: u64, name: &str, at: SimTime, values: &[(&str, f64)]) {
        let args: serde_json::Map<String, Value> = values
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        self.push(
            json!({"ph": "C", "pid": pid, "name": name, "ts": us(at), "args": args}),
            None,
            at,
        );
    }

    /// Count `n` more events as cut: events dropped before they reached the trace (a
    /// recording with its own limit).
    pub fn add_cut(&mut self, n: u64) {
        self.cut += n;
    }

    /// Events kept and events cut.
    pub fn counts(&self) -> (usize, u64) {
        (self.events.len(), self.cut)
    }

    /// The lanes of every track (see the module docs).
    fn lanes(&self) -> Lanes {
        let mut tracks: BTreeMap<(u64, u64), Vec<usize>> = BTreeMap::new();
        for (i, e) in self.events.iter().enumerate() {
            if let Some(s) = e.span {
                tracks.entry((s.pid, s.tid)).or_default().push(i);
            }
        }
        let mut lanes = Lanes {
            tid: vec![None; self.events.len()],
            names: BTreeMap::new(),
            sort_index: BTreeMap::new(),
        };
        // Each track's lane per event, and how many lanes it has.
        let mut lane_of = vec![0; self.events.len()];
        let mut count: BTreeMap<(u64, u64), usize> = BTreeMap::new();
        for (&track, events) in &tracks {
            let spans: Vec<(u64, u64)> = events
                .iter()
                .filter_map(|&i| self.events[i].span.map(|s| (s.start, s.end)))
                .collect();
            let assigned = assign_lanes(&spans);
            for (&i, &l) in events.iter().zip(&assigned) {
                lane_of[i] = l;
            }
            count.insert(track, assigned.iter().max().map_or(1, |m| m + 1));
        }
        // The tids each process uses: named threads and tracks.
        let mut used: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
        for &(pid, tid) in self.threads.keys().chain(tracks.keys()) {
            used.entry(pid).or_default().insert(tid);
        }
        let mut lane_tid: BTreeMap<(u64, u64, usize), u64> = BTreeMap::new();
        for (pid, tids) in used {
            let lanes_of = |tid: u64| count.get(&(pid, tid)).copied().unwrap_or(1);
            if tids.iter().all(|&t| lanes_of(t) == 1) {
                continue;
            }
            let mut taken = tids.clone();
            let mut next = tids.last().map_or(0, |m| m.wrapping_add(1));
            let mut index = 0u64;
            for &tid in &tids {
                lanes.sort_index.insert((pid, tid), index);
                index += 1;
                for lane in 1..lanes_of(tid) {
                    while taken.contains(&next) {
                        next = next.wrapping_add(1);
                    }
                    taken.insert(next);
                    lane_tid.insert((pid, tid, lane), next);
                    let base = self
                        .threads
                        .get(&(pid, tid))
                        .cloned()
                        .unwrap_or_else(|| format!("thread {tid}"));
                    lanes
                        .names
                        .insert((pid, next), format!("{base} ({})", lane + 1));
                    lanes.sort_index.insert((pid, next), index);
                    index += 1;
                }
            }
        }
        for (i, e) in self.events.iter().enumerate() {
            if let Some(s) = e.span.filter(|_| lane_of[i] > 0) {
                lanes.tid[i] = Some(lane_tid[&(s.pid, s.tid, lane_of[i])]);
            }
        }
        lanes
    }

    /// The trace as one JSON value: metadata events naming processes and threads (and placing
    /// the lanes of threads whose events overlap, see the module docs), then the events in the
    /// order they were recorded.
    pub fn to_json(&self) -> Value {
        let mut all: Vec<Value> = Vec::with_capacity(self.events.len() + 8);
        for (pid, name) in &self.processes {
            all.push(
                json!({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}}),
            );
            all.push(json!({"ph": "M", "pid": pid, "name": "process_sort_index", "args": {"sort_index": pid}}));
        }
        let lanes = self.lanes();
        let mut threads = self.threads.clone();
        threads.extend(lanes.names);
        for ((pid, tid), name) in &threads {
            all.push(json!({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}}));
        }
        for ((pid, tid), index) in &lanes.sort_index {
            all.push(json!({"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": index}}));
        }
        for (e, tid) in self.events.iter().zip(&lanes.tid) {
            let mut json = e.json.clone();
            if let Some(tid) = tid {
                json["tid"] = json!(tid);
            }
            all.push(json);
        }
        let mut other: serde_json::Map<String, Value> = self
            .about
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        other.insert("events_kept".into(), json!(self.events.len()));
        other.insert("events_cut".into(), json!(self.cut));
        if self.cut > 0 {
            let note = format!(
                "trace cut at {} events: {} more were not written (raise --trace-limit)",
                self.limit, self.cut
            );
            all.push(
                json!({"ph": "i", "s": "g", "pid": 0, "tid": 0, "name": note, "ts": us(self.end)}),
            );
            other.insert("cut".into(), json!(note));
        }
        json!({"traceEvents": all, "displayTimeUnit": "ns", "otherData": other})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_in_microseconds_with_names_and_a_stated_cut() {
        let mut t = Trace::new(2);
        t.process(3, "chip 3");
        t.thread(3, 1, "matrix unit");
        // 1.5 us = 1,500,000 ps from 2 us.
        t.complete(
            3,
            1,
            "fwd",
            SimTime::from_ps(2_000_000),
            SimDuration::from_ps(1_500_000),
            Value::Null,
        );
        t.counter(3, "link", SimTime::from_ps(500_000), &[("util", 0.25)]);
        t.complete(
            3,
            1,
            "bwd",
            SimTime::from_ps(4_000_000),
            SimDuration::from_ps(1),
            json!({"k": 1}),
        );
        let v = t.to_json();
        let ev = v["traceEvents"].as_array().unwrap();
        // 2 process metadata events, 1 thread name, 2 kept events, 1 note of the cut.
        assert_eq!(ev.len(), 6);
        assert_eq!(ev[0]["args"]["name"], "chip 3");
        assert_eq!(ev[2]["args"]["name"], "matrix unit");
        assert_eq!(ev[3]["ts"], 2.0);
        assert_eq!(ev[3]["dur"], 1.5);
        assert_eq!(ev[4]["ph"], "C");
        assert_eq!(ev[4]["args"]["util"], 0.25);
        assert!(ev[5]["name"].as_str().unwrap().contains("1 more"));
        assert_eq!(v["otherData"]["events_cut"], 1);
        // The end of the cut event (4 us + 1 ps) places the note.
        assert_eq!(ev[5]["ts"], 4.000001);
    }

    fn nests(spans: &[(u64, u64)], lanes: &[usize]) -> bool {
        for (i, a) in spans.iter().enumerate() {
            for (j, b) in spans.iter().enumerate() {
                if lanes[i] == lanes[j] && a.0 < b.0 && b.0 < a.1 && a.1 < b.1 {
                    return false;
                }
            }
        }
        true
    }

    #[test]
    fn lanes_split_overlaps_and_keep_nested_touching_and_identical_intervals_together() {
        // Partly overlapping: the second goes to a lane of its own.
        assert_eq!(assign_lanes(&[(0, 10), (5, 15)]), vec![0, 1]);
        // Nested (in any order recorded), touching and identical intervals share lane 0.
        assert_eq!(assign_lanes(&[(2, 5), (0, 10), (5, 10)]), vec![0, 0, 0]);
        assert_eq!(assign_lanes(&[(0, 5), (5, 10), (10, 10)]), vec![0, 0, 0]);
        assert_eq!(assign_lanes(&[(3, 7), (3, 7), (3, 7)]), vec![0, 0, 0]);
        // Same start: the longer one is the outer one.
        assert_eq!(assign_lanes(&[(0, 4), (0, 9)]), vec![0, 0]);
        // A lane frees up once its events end: (12, 20) goes back to lane 0; (6, 14) nests in
        // lane 1's (5, 15), and (8, 12) in (6, 14).
        let spans = [(0, 10), (5, 15), (8, 12), (6, 14), (12, 20)];
        let lanes = assign_lanes(&spans);
        assert_eq!(lanes, vec![0, 1, 1, 1, 0]);
        assert!(nests(&spans, &lanes));
        // A staircase of overlaps needs a lane per step until the first ends.
        let stairs: Vec<(u64, u64)> = (0..6).map(|i| (i, i + 4)).collect();
        let lanes = assign_lanes(&stairs);
        assert_eq!(lanes, vec![0, 1, 2, 3, 0, 1]);
        assert!(nests(&stairs, &lanes));
    }

    fn x(name: &str, tid: u64, ts: f64, dur: f64) -> Value {
        json!({"ph": "X", "pid": 1, "tid": tid, "name": name, "ts": ts, "dur": dur})
    }

    #[test]
    fn check_nesting_names_the_first_partly_overlapping_pair() {
        let trace = |ev: Vec<Value>| json!({ "traceEvents": ev });
        // Nested, touching and identical events pass, and so do overlaps on other tracks.
        let ok = trace(vec![
            x("outer", 0, 0.0, 10.0),
            x("inner", 0, 2.0, 3.0),
            x("same", 0, 2.0, 3.0),
            x("next", 0, 10.0, 1.0),
            x("other thread", 1, 5.0, 10.0),
            json!({"ph": "C", "pid": 1, "name": "c", "ts": 7.0, "args": {"v": 1}}),
        ]);
        assert_eq!(check_nesting(&ok), Ok(()));
        // A hand-made partial overlap fails, naming both events.
        let bad = trace(vec![x("a", 0, 0.0, 10.0), x("b", 0, 5.0, 10.0)]);
        let err = check_nesting(&bad).unwrap_err();
        assert!(
            err.contains("\"a\" (ts 0.0, dur 10.0, pid 1, tid 0)"),
            "{err}"
        );
        assert!(
            err.contains("\"b\" (ts 5.0, dur 10.0, pid 1, tid 0)"),
            "{err}"
        );
        // An overlap of one picosecond is an overlap.
        let bad = trace(vec![
            x("a", 0, 0.0, 0.000002),
            x("b", 0, 0.000001, 0.000002),
        ]);
        assert!(check_nesting(&bad).is_err());
        // Touching events whose microseconds do not add up exactly in floating point:
        // 0.1 + 0.2 != 0.3, but 100,000 ps + 200,000 ps = 300,000 ps.
        let touch = trace(vec![x("a", 0, 0.1, 0.2), x("b", 0, 0.3, 1.0)]);
        assert_eq!(check_nesting(&touch), Ok(()));
        assert!(check_nesting(&json!({})).is_err());
        assert!(check_nesting(&trace(vec![json!({"ph": "X", "pid": 1, "tid": 0})])).is_err());
    }

    #[test]
    fn overlapping_events_get_lanes_that_nest_named_and_sorted_under_their_thread() {
        let ps = SimTime::from_ps;
        let d = SimDuration::from_ps;
        let mut t = Trace::new(100);
        t.process(1, "chip 1");
        t.thread(1, 0, "compute");
        t.thread(1, 5, "DMA");
        t.complete(1, 0, "gemm", ps(0), d(10), Value::Null);
        // Three transfers on the DMA thread: the second overlaps the first, the third
        // overlaps both.
        t.complete(1, 5, "t0", ps(0), d(10), Value::Null);
        t.complete(1, 5, "t1", ps(5), d(10), Value::Null);
        t.complete(1, 5, "t2", ps(8), d(10), Value::Null);
        // An unnamed thread with an overlap, and a thread of another process that nests.
        t.complete(1, 2, "u0", ps(0), d(4), Value::Null);
        t.complete(1, 2, "u1", ps(2), d(4), Value::Null);
        t.complete(2, 0, "p", ps(0), d(4), Value::Null);
        t.complete(2, 0, "q", ps(1), d(2), Value::Null);
        t.counter(1, "util", ps(3), &[("u", 0.5)]);
        let v = t.to_json();
        assert_eq!(v.to_string(), t.to_json().to_string(), "deterministic");
        check_nesting(&v).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        let meta = |name: &str| -> Vec<(u64, u64, Value)> {
            ev.iter()
                .filter(|e| e["ph"] == "M" && e["name"] == name)
                .map(|e| {
                    (
                        e["pid"].as_u64().unwrap(),
                        e["tid"].as_u64().unwrap(),
                        e["args"].clone(),
                    )
                })
                .collect()
        };
        // Process 1 uses tids 0, 2, 5: its lanes take 6 (DMA (2)), 7 (DMA (3)) and 8 (thread 2 (2))
        // in order of (tid, lane).
        let names: Vec<(u64, u64, String)> = meta("thread_name")
            .into_iter()
            .map(|(p, t, a)| (p, t, a["name"].as_str().unwrap().to_string()))
            .collect();
        let want = [
            (1, 0, "compute"),
            (1, 5, "DMA"),
            (1, 6, "thread 2 (2)"),
            (1, 7, "DMA (2)"),
            (1, 8, "DMA (3)"),
        ];
        assert_eq!(names, want.map(|(p, t, n)| (p, t, n.to_string())).to_vec());
        // Every thread of process 1 is sorted: each thread's lanes right under it. Process
        // 2 needs no lanes and gets no sort index.
        let sort: Vec<(u64, u64, u64)> = meta("thread_sort_index")
            .into_iter()
            .map(|(p, t, a)| (p, t, a["sort_index"].as_u64().unwrap()))
            .collect();
        assert_eq!(
            sort,
            vec![
                (1, 0, 0),
                (1, 2, 1),
                (1, 5, 3),
                (1, 6, 2),
                (1, 7, 4),
                (1, 8, 5)
            ]
        );
        let tid_of = |name: &str| {
            ev.iter()
                .find(|e| e["name"] == name)
                .map(|e| e["tid"].as_u64().unwrap())
                .unwrap()
        };
        assert_eq!(
            ["gemm", "t0", "t1", "t2", "u0", "u1", "p", "q"].map(tid_of),
            [0, 5, 7, 8, 2, 6, 0, 0]
        );
        // Counters keep no tid, and the events stay in the order recorded.
        let c = ev.iter().find(|e| e["ph"] == "C").unwrap();
        assert!(c.get("tid").is_none());
        let order: Vec<&str> = ev
            .iter()
            .filter(|e| e["ph"] == "X")
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(order, ["gemm", "t0", "t1", "t2", "u0", "u1", "p", "q"]);
        assert_eq!(t.counts(), (9, 0));
    }
}
