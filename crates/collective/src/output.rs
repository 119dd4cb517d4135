//! What `podsim collective` and `podsim microbench` print: the table of one size, a sweep's
//! CSV fields, its table and the JSON of the sizes it kept, a microbenchmark's keys and
//! table. Tables are rows (a label and its cells) for `podsim_report::render`.

use podsim_units::Bytes;

use crate::{CollectiveOutput, LinkTiming, Measurement, Micro, MicroResult, ModelKind};

/// A table's rows: a label and its cells.
pub type Rows = Vec<(String, Vec<String>)>;

/// A bandwidth in GB/s, three decimals.
fn gbps(v: f64) -> String {
    format!("{:.3} GB/s", v / 1e9)
}

/// The columns of a collective sweep's CSV.
pub const SWEEP_HEADER: &str = "bytes,time_s,algorithm_bandwidth_bytes_per_s,bus_bandwidth_bytes_per_s,lower_bound_time_s,max_link_utilization,bytes_on_wire,error";

/// The CSV fields (the columns of [`SWEEP_HEADER`]) of a sweep's size `bytes` measured as `m`.
pub fn sweep_fields(bytes: u64, m: &Measurement) -> Vec<String> {
    vec![
        bytes.to_string(),
        m.time_s.to_string(),
        m.algorithm_bandwidth_bytes_per_s.to_string(),
        m.bus_bandwidth_bytes_per_s.to_string(),
        m.lower_bound_time_s.to_string(),
        m.max_link_utilization.to_string(),
        m.bytes_on_wire.to_string(),
        String::new(),
    ]
}

/// A sweep's size that failed: `podsim collective --sweep --json`'s object for it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SweepFailure {
    /// The size.
    pub bytes: u64,
    /// Why it failed (commas and newlines made semicolons, as the CSV keeps it).
    pub error: String,
}

impl SweepFailure {
    /// Size `bytes` failed with `why`.
    pub fn new(bytes: u64, why: &str) -> SweepFailure {
        SweepFailure {
            bytes,
            error: why.replace([',', '\n'], ";"),
        }
    }

    /// Its CSV fields: the size, empty columns and the reason.
    pub fn fields(&self) -> Vec<String> {
        let mut f = vec![self.bytes.to_string()];
        f.extend(std::iter::repeat_n(String::new(), 6));
        f.push(self.error.clone());
        f
    }
}

/// A size a resumed sweep kept from its CSV, as `--json` prints it: the columns the file
/// holds (null where one does not parse) and `resumed`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Resumed {
    /// A size that failed the first time.
    Failed {
        /// The size.
        bytes: Option<u64>,
        /// Why it failed.
        error: String,
        /// Always true.
        resumed: bool,
    },
    /// A size that ran.
    Ran {
        /// The size.
        bytes: Option<u64>,
        /// Simulated time, seconds.
        time_s: Option<f64>,
        /// bytes / time.
        algorithm_bandwidth_bytes_per_s: Option<f64>,
        /// algbw x the kind's bus factor.
        bus_bandwidth_bytes_per_s: Option<f64>,
        /// The physical bound, seconds.
        lower_bound_time_s: Option<f64>,
        /// Highest link load seen.
        max_link_utilization: Option<f64>,
        /// Wire bytes times links crossed.
        bytes_on_wire: Option<u64>,
        /// Always true.
        resumed: bool,
    },
}

impl Resumed {
    /// The size of the CSV row `f` (the columns of [`SWEEP_HEADER`]).
    pub fn from_fields(f: &[String]) -> Resumed {
        let num = |i: usize| f[i].parse::<f64>().ok();
        let bytes = f[0].parse::<u64>().ok();
        if !f[7].is_empty() {
            return Resumed::Failed {
                bytes,
                error: f[7].clone(),
                resumed: true,
            };
        }
        Resumed::Ran {
            bytes,
            time_s: num(1),
            algorithm_bandwidth_bytes_per_s: num(2),
            bus_bandwidth_bytes_per_s: num(3),
            lower_bound_time_s: num(4),
            max_link_utilization: num(5),
            bytes_on_wire: f[6].parse::<u64>().ok(),
            resumed: true,
        }
    }
}

/// A sweep's table from its sizes and their CSV rows (the columns of [`SWEEP_HEADER`]), in
/// order: a row per size, and the sizes that failed with their reasons.
pub fn sweep_rows(sizes: &[u64], rows: &[Vec<String>]) -> (Rows, Vec<String>) {
    let mut table = vec![(
        "bytes".to_string(),
        vec![
            "time".into(),
            "algbw".into(),
            "busbw".into(),
            "lower bound".into(),
            "max link util".into(),
        ],
    )];
    let mut failures = Vec::new();
    for (&b, fields) in sizes.iter().zip(rows) {
        let num = |i: usize| fields[i].parse::<f64>().unwrap_or(f64::NAN);
        table.push((
            Bytes(b).to_string(),
            if fields[7].is_empty() {
                vec![
                    format!("{:.6e} s", num(1)),
                    gbps(num(2)),
                    gbps(num(3)),
                    format!("{:.6e} s", num(4)),
                    format!("{:.3}", num(5)),
                ]
            } else {
                failures.push(format!("{}: {}", Bytes(b), fields[7]));
                ["failed", "-", "-", "-", "-"].map(String::from).to_vec()
            },
        ));
    }
    (table, failures)
}

impl CollectiveOutput<'_> {
    /// The table of one size as `podsim collective` prints it, with `timing` (the link
    /// latency and endpoint rows) after the topology.
    pub fn rows(&self, timing: Rows) -> Rows {
        let m = self.measurement;
        let mut rows = vec![
            (
                "collective".to_string(),
                vec![format!(
                    "{} ({}), {} model",
                    self.kind, self.algorithm, self.model
                )],
            ),
            (
                "topology".into(),
                vec![format!("{} ({} ranks)", self.topology, m.ranks)],
            ),
            ("bytes per rank".into(), vec![Bytes(m.bytes).to_string()]),
            (
                "time".into(),
                vec![if m.bound_applied {
                    format!(
                        "{:.6e} s (the lower bound: the analytic model sees no contention and came in below it)",
                        m.time_s
                    )
                } else {
                    format!("{:.6e} s", m.time_s)
                }],
            ),
            (
                "algorithm bandwidth".into(),
                vec![gbps(m.algorithm_bandwidth_bytes_per_s)],
            ),
            (
                "bus bandwidth".into(),
                vec![gbps(m.bus_bandwidth_bytes_per_s)],
            ),
            (
                "lower bound".into(),
                vec![format!("{:.6e} s", m.lower_bound_time_s)],
            ),
            (
                "bytes on wire".into(),
                vec![Bytes(m.bytes_on_wire).to_string()],
            ),
            (
                "max link utilization".into(),
                vec![format!("{:.3}", m.max_link_utilization)],
            ),
            (
                "result".into(),
                vec![match (&m.verified, &m.unverified_reason) {
                    (true, _) => "verified".into(),
                    (false, Some(why)) => format!("not verified: {why}"),
                    (false, None) => "not verified".into(),
                }],
            ),
        ];
        rows.splice(2..2, timing);
        rows
    }
}

/// One microbenchmark as `podsim microbench --json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MicroOutput<'a> {
    /// The benchmark's name.
    pub benchmark: &'static str,
    /// The topology as given.
    pub topology: &'a str,
    /// The network model's name.
    pub model: &'static str,
    /// Bytes per put (per endpoint for all-to-all).
    pub bytes: u64,
    /// Elapsed simulated time, seconds.
    pub time_s: f64,
    /// Payload bytes moved per second.
    pub throughput_bytes_per_s: f64,
    /// Transfers in flight at once.
    pub streams: usize,
    /// The timing of the links and endpoints.
    #[serde(flatten)]
    pub timing: LinkTiming,
}

impl<'a> MicroOutput<'a> {
    /// `r`, the run of `micro` with `bytes` on `topology` on `model`, with `timing`.
    pub fn new(
        micro: Micro,
        topology: &'a str,
        model: ModelKind,
        bytes: u64,
        r: &MicroResult,
        timing: LinkTiming,
    ) -> MicroOutput<'a> {
        MicroOutput {
            benchmark: micro.name(),
            topology,
            model: model.name(),
            bytes,
            time_s: r.time_s,
            throughput_bytes_per_s: r.throughput_bytes_per_s,
            streams: r.streams,
            timing,
        }
    }

    /// The table `podsim microbench` prints, with `timing` (the link latency and endpoint
    /// rows) after the topology.
    pub fn rows(&self, timing: Rows) -> Rows {
        let mut rows = vec![
            (
                "benchmark".to_string(),
                vec![format!("{} ({} model)", self.benchmark, self.model)],
            ),
            ("topology".into(), vec![self.topology.to_string()]),
            ("bytes".into(), vec![Bytes(self.bytes).to_string()]),
            ("streams".into(), vec![self.streams.to_string()]),
            ("time".into(), vec![format!("{:.6e} s", self.time_s)]),
            (
                "throughput".into(),
                vec![if self.benchmark == Micro::PutLatency.name() {
                    "-".into()
                } else {
                    gbps(self.throughput_bytes_per_s)
                }],
            ),
        ];
        rows.splice(2..2, timing);
        rows
    }
}

impl Micro {
    /// The microbenchmark called `name`, or an error naming the nearest and every one.
    pub fn from_name(name: &str) -> Result<Micro, String> {
        let names: Vec<&str> = Micro::ALL.iter().map(|m| m.name()).collect();
        Micro::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| {
                format!(
                    "`{}` is not a microbenchmark; the nearest is `{}` (choose from: {})",
                    name,
                    podsim_units::nearest(name, &names).unwrap_or(""),
                    names.join(", ")
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_size_is_kept_and_resumed_with_its_reason() {
        let failed = SweepFailure::new(1024, "too big,\nreally");
        let fields = failed.fields();
        assert_eq!(fields.len(), SWEEP_HEADER.split(',').count());
        assert_eq!(fields[7], "too big;;really");
        assert_eq!(
            Resumed::from_fields(&fields),
            Resumed::Failed {
                bytes: Some(1024),
                error: "too big;;really".into(),
                resumed: true
            }
        );
        let (rows, failures) = sweep_rows(&[1024], &[fields]);
        assert_eq!(rows[1].1[0], "failed");
        assert_eq!(failures, vec!["1 KiB: too big;;really".to_string()]);
    }
}
