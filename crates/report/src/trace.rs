//! Chrome trace-event JSON, which the Perfetto UI (ui.perfetto.dev) and chrome://tracing open:
//! a process per chip (or router), a thread per resource, complete events (`"ph": "X"`) for
//! tasks and transfers with `ts` and `dur` in microseconds, and counters (`"ph": "C"`) for
//! quantities over time such as link utilisation.
//!
//! Large runs stay usable: a trace holds at most `limit` events; the events past the limit are
//! counted, not kept, and the file says how many were cut (in `otherData` and in an instant
//! event at the end).

use std::collections::BTreeMap;

use podsim_units::{SimDuration, SimTime};
use serde_json::{Value, json};

/// A trace being built.
#[derive(Debug, Clone)]
pub struct Trace {
    limit: usize,
    events: Vec<Value>,
    cut: u64,
    processes: BTreeMap<u64, String>,
    threads: BTreeMap<(u64, u64), String>,
    end: SimTime,
    about: BTreeMap<String, Value>,
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

    fn push(&mut self, e: Value, at: SimTime) {
        self.end = self.end.max(at);
        if self.events.len() < self.limit {
            self.events.push(e);
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
        self.push(e, start + dur);
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

    /// The trace as one JSON value: metadata events naming processes and threads, then the
    /// events in the order they were recorded.
    pub fn to_json(&self) -> Value {
        let mut all: Vec<Value> = Vec::with_capacity(self.events.len() + 8);
        for (pid, name) in &self.processes {
            all.push(
                json!({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}}),
            );
            all.push(json!({"ph": "M", "pid": pid, "name": "process_sort_index", "args": {"sort_index": pid}}));
        }
        for ((pid, tid), name) in &self.threads {
            all.push(json!({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}}));
        }
        all.extend(self.events.iter().cloned());
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
}
