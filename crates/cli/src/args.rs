//! Argument helpers every command shares: the error of a flag, sizes, and the checks of flags
//! that have an effect only beside another.

use std::process::ExitCode;

use podsim_units::Bytes;

use crate::Failure;

/// A usage error of `flag`: `<command line>: `--flag`: why`.
/// The events a trace keeps unless `--trace-limit` says otherwise.
pub(crate) const DEFAULT_TRACE_LIMIT: usize = 1_000_000;

pub(crate) fn flag_err(flag: &str, why: impl std::fmt::Display) -> Failure {
    Failure::usage(format!("<command line>: `{flag}`: {why}"))
}

/// The first flag of `flags` (given, flag) that was given, as a usage error saying `why`.
pub(crate) fn none_given(flags: &[(bool, &str)], why: &str) -> Result<(), Failure> {
    match flags.iter().find(|(given, _)| *given) {
        Some((_, flag)) => Err(flag_err(flag, why)),
        None => Ok(()),
    }
}

/// A size flag (`64 MiB`) in bytes, or an error naming the flag.
pub(crate) fn size(flag: &str, s: &str) -> Result<u64, Failure> {
    s.parse::<Bytes>()
        .map(|b| b.0)
        .map_err(|e| flag_err(flag, format!("{e}; expected a size such as \"64 MiB\"")))
}

/// `--trace-limit` without `--trace` would limit nothing: an error.
pub(crate) fn trace_limit_needs_trace(trace: bool, limit: usize) -> Result<(), Failure> {
    if !trace && limit != DEFAULT_TRACE_LIMIT {
        return Err(flag_err(
            "--trace-limit",
            "only a --trace has events to limit; add --trace or drop the flag",
        ));
    }
    Ok(())
}

/// `--no-resume` without `--sweep` would resume nothing: an error.
pub(crate) fn no_resume_needs_sweep(sweep: bool, no_resume: bool) -> Result<(), Failure> {
    if !sweep && no_resume {
        return Err(flag_err(
            "--no-resume",
            "only a --sweep writes a CSV to resume; add --sweep or drop the flag",
        ));
    }
    Ok(())
}

/// Print a result: one JSON object with `--json`, else its text.
pub(crate) fn print<T: serde::Serialize>(
    json: bool,
    out: &T,
    text: impl Fn(&T) -> String,
) -> Result<ExitCode, Failure> {
    if json {
        outln!("{}", podsim_report::to_json(out));
    } else {
        out!("{}", text(out));
    }
    Ok(ExitCode::SUCCESS)
}

/// A refused input is a usage error naming its flag; a run that would exceed the memory
/// limit, or that failed, a runtime error.
impl From<podsim_units::RequestError> for Failure {
    fn from(e: podsim_units::RequestError) -> Self {
        use podsim_units::RequestError as E;
        match e {
            E::Input { flag, why } => flag_err(flag, why),
            E::Memory(why) => Failure::runtime(format!("<command line>: {why}")),
            E::Invalid(why) => Failure::usage(format!("<command line>: {why}")),
            E::Run(why) => Failure::runtime(why),
        }
    }
}

impl From<podsim_numerics::NumericsError> for Failure {
    fn from(e: podsim_numerics::NumericsError) -> Self {
        match e {
            podsim_numerics::NumericsError::Input { flag, why } => flag_err(flag, why),
            e => Failure::usage(format!("<command line>: {e}")),
        }
    }
}

/// The values of a flag with a closed set of names, for `--help`'s `[possible values: ...]`
/// and the shell completions ([`listed`]).
#[derive(Clone)]
pub(crate) struct Listed(Vec<&'static str>);

/// A flag's value parser that names its choices: `--help` shows them as `[possible values:
/// ...]` and `podsim completions` offers them. The value is taken as typed and checked where
/// the command reads it, which gives the one-line error naming the flag, the nearest choice
/// and the whole list, and which also takes the forms a list cannot hold (`--traffic
/// hotspot:3@0.2`, `--format cfp8:e4:bias=7`).
pub(crate) fn listed(names: impl IntoIterator<Item = &'static str>) -> Listed {
    Listed(names.into_iter().collect())
}

impl clap::builder::TypedValueParser for Listed {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.0.iter().map(|n| clap::builder::PossibleValue::new(*n)),
        ))
    }
}

/// A sweep that could not be spread over the ranks is a runtime failure.
impl From<podsim_ranks::RanksError> for Failure {
    fn from(e: podsim_ranks::RanksError) -> Self {
        Failure::runtime(e.0)
    }
}

/// The power figures of the chip a system names, for `--energy`.
pub(crate) fn chip_power(chip: Option<&str>) -> Result<podsim_system::energy::ChipPower, Failure> {
    podsim_system::energy::ChipPower::of_chip(chip).map_err(|e| flag_err("--energy", e))
}

/// `flag` needs the flow model's link loads (`lead`: what it does with them): an error on any
/// other model.
pub(crate) fn needs_flow(
    flag: &str,
    lead: &str,
    model: podsim_collective::ModelKind,
) -> Result<(), Failure> {
    if model == podsim_collective::ModelKind::Flow {
        return Ok(());
    }
    Err(flag_err(
        flag,
        format!(
            "{lead} the flow model's link loads; the {} model does not report them: add --model flow",
            model.name()
        ),
    ))
}
