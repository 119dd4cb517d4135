//! Settings given on top of a router configuration (a command line's flags), and the checks a
//! run's network and length pass before it starts.

use podsim_topology::Network;

use crate::{Arbitration, ConfigError, LinkCycles, NocRouting, Pattern, RouterConfig, RouterMode};

/// Settings that replace a [`RouterConfig`]'s where given.
#[derive(Debug, Clone, Copy, Default)]
pub struct RouterOverrides<'a> {
    /// Flits per packet.
    pub packet_flits: Option<u32>,
    /// Virtual channels per port.
    pub vcs: Option<u32>,
    /// Buffer depth per virtual channel, flits.
    pub buffer_flits: Option<u32>,
    /// Router pipeline stages (podsim's router).
    pub pipeline_stages: Option<u32>,
    /// Every link's latency, cycles (podsim's router).
    pub link_cycles: Option<u32>,
    /// The router model's name (`podsim`, `booksim`).
    pub router: Option<&'a str>,
    /// The allocators' arbitration (`round-robin`, `fcfs`; podsim's router).
    pub arbitration: Option<&'a str>,
}

impl RouterConfig {
    /// Replace the settings `o` gives. An error names the setting (`router`, `arbitration`,
    /// `pipeline_stages`, `link_cycles`): a name that is none, or a setting of podsim's own
    /// router given with BookSim's, which does not run it. The values' ranges are
    /// [`RouterConfig::validate`]'s.
    pub fn apply(&mut self, o: &RouterOverrides) -> Result<(), ConfigError> {
        if let Some(v) = o.packet_flits {
            self.packet_flits = v;
        }
        if let Some(v) = o.vcs {
            self.vcs = v;
        }
        if let Some(v) = o.buffer_flits {
            self.buffer_flits = v;
        }
        if let Some(v) = o.pipeline_stages {
            self.pipeline_stages = v;
        }
        if let Some(v) = o.link_cycles {
            self.link_cycles = LinkCycles::all(v);
        }
        if let Some(m) = o.router {
            self.router = RouterMode::parse(m).map_err(|e| ConfigError::new("router", e.why))?;
        }
        if let Some(s) = o.arbitration {
            self.arbitration = match s {
                "round-robin" => Arbitration::RoundRobin,
                "fcfs" => Arbitration::Fcfs,
                _ => {
                    return Err(ConfigError::new(
                        "arbitration",
                        format!("unknown arbitration `{s}`; expected round-robin or fcfs"),
                    ));
                }
            };
        }
        if self.router == RouterMode::Booksim {
            // BookSim's iq router takes its delays and allocators from its own settings (the
            // title line prints them); these settings drive podsim's own router only.
            for (given, key) in [
                (o.pipeline_stages.is_some(), "pipeline_stages"),
                (o.link_cycles.is_some(), "link_cycles"),
                (o.arbitration.is_some(), "arbitration"),
            ] {
                if given {
                    return Err(ConfigError::new(
                        key,
                        "sets podsim's own router, which --router booksim does not run; drop the flag, or give it with --router podsim",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The most router-cycles (routers x measured cycles) one run may take.
pub const MAX_ROUTER_CYCLES: u128 = 10_000_000_000;

/// Whether `net` can carry traffic: it needs two nodes (else an error keyed `topology`).
pub fn check_nodes(net: &Network) -> Result<(), ConfigError> {
    if net.node_count() < 2 {
        return Err(ConfigError::new(
            "topology",
            format!(
                "{} has {} node: traffic needs at least two",
                net.shorthand(),
                net.node_count()
            ),
        ));
    }
    Ok(())
}

/// Whether a run of `cycles` measured cycles on `net` may start: at most
/// [`MAX_ROUTER_CYCLES`] router-cycles, minutes, not hours (else an error keyed `cycles`).
pub fn check_cycles(net: &Network, cycles: u64) -> Result<(), ConfigError> {
    let router_cycles = u128::from(net.node_count()) * u128::from(cycles);
    if router_cycles > MAX_ROUTER_CYCLES {
        return Err(ConfigError::new(
            "cycles",
            format!(
                "{} cycles on {} routers is {router_cycles} router-cycles, more than the {MAX_ROUTER_CYCLES} a run may take (about ten minutes on one core, with the drain); give fewer cycles",
                cycles,
                net.node_count()
            ),
        ));
    }
    Ok(())
}

/// The routing and traffic of a run of `cycles` measured cycles on `net`, from their names
/// (`routing`: the network's default when `None`), checked in turn: the network's nodes, the
/// routing, the run's size, the pattern and whether `net` can carry it. An error is keyed by
/// what is at fault: `topology`, `routing`, `cycles` or `traffic`.
pub fn resolve_run(
    net: &Network,
    routing: Option<&str>,
    traffic: &str,
    cycles: u64,
) -> Result<(NocRouting, Pattern), ConfigError> {
    let keyed = |key: &'static str| move |e: ConfigError| ConfigError::new(key, e.why);
    check_nodes(net)?;
    let routing = match routing {
        Some(r) => NocRouting::parse(r).map_err(keyed("routing"))?,
        None => NocRouting::default_for(net),
    };
    check_cycles(net, cycles)?;
    let pattern = Pattern::parse(traffic).map_err(keyed("traffic"))?;
    crate::check_pattern(&pattern, net).map_err(keyed("traffic"))?;
    Ok((routing, pattern))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_refused_with_the_key_at_fault() {
        let link = podsim_topology::LinkSpec {
            kind: podsim_topology::LinkKind::OnChip,
            bandwidth: podsim_units::Bandwidth::from_gbps(16).unwrap(),
            latency: podsim_units::SimDuration::from_ns(1),
        };
        let net = Network::Cube(
            podsim_topology::KAryNCube::new(vec![4, 4], vec![false; 2], link).unwrap(),
        );
        let key = |r: Option<&str>, t: &str, c: u64| resolve_run(&net, r, t, c).unwrap_err().key;
        assert_eq!(key(Some("nope"), "uniform", 100), "routing");
        assert_eq!(key(None, "nope", 100), "traffic");
        assert_eq!(key(None, "uniform", u64::MAX), "cycles");
        assert!(resolve_run(&net, None, "uniform", 100).is_ok());
        let mut cfg = RouterConfig::default();
        let o = RouterOverrides {
            router: Some("booksim"),
            arbitration: Some("fcfs"),
            ..Default::default()
        };
        assert_eq!(cfg.apply(&o).unwrap_err().key, "arbitration");
    }
}
