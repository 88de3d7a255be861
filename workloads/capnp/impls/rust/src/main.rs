//! `capnp-rust CASE MODE REUSE COMPRESSION ITERS`: the benchmark program of SPEC §5 with the
//! `capnp` crate.
//!
//! Exit status 0 when the run is done and every response checked; 1 on any failure at run
//! time (a wrong answer, a hostile or truncated message, a broken pipe), with one line on
//! stderr; 2 for a bad command line, with the usage on stderr and nothing on stdout.

use capnp_rust::modes::{self, CaseName, Config, Figures, Mode, Outcome, Reuse};
use capnp_rust::stream::Compression;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

const PROGRAM: &str = "capnp-rust";

const USAGE: &str = "\
usage: capnp-rust CASE MODE REUSE COMPRESSION ITERS
    CASE         carsales | catrank | eval
    MODE         object | bytes | pipe | client | server
    REUSE        reuse | no-reuse
    COMPRESSION  none | packed          (object: none only)
    ITERS        1 .. 1000000000        (timed iterations)";

const MAX_ITERATIONS: u64 = 1_000_000_000;

fn main() -> ExitCode {
    // setup_s counts from here (SPEC §5).
    let started = Instant::now();
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let config = match parse(&args) {
        Ok(config) => config,
        Err(problem) => {
            eprintln!("{PROGRAM}: {problem}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match modes::run(&config, started) {
        Ok(Outcome::Served(served)) => {
            eprintln!("{{\"served\": {served}}}");
            ExitCode::SUCCESS
        }
        Ok(Outcome::Report(figures)) => {
            let line = report(&config, &figures);
            // The client's stdout carries its requests: its report is stderr's last line.
            let written = if config.mode == Mode::Client {
                writeln!(std::io::stderr(), "{line}")
            } else {
                let mut out = std::io::stdout().lock();
                writeln!(out, "{line}").and_then(|()| out.flush())
            };
            match written {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("{PROGRAM}: cannot write the report: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Err(failure) => {
            let c = &config;
            eprintln!(
                "{PROGRAM}: {} {} {} {}: {failure}",
                c.case.as_str(),
                c.mode.as_str(),
                c.reuse.as_str(),
                c.compression.as_str()
            );
            ExitCode::from(1)
        }
    }
}

/// The five words of SPEC §5, or what is wrong with them.
fn parse(args: &[String]) -> Result<Config, String> {
    let [case, mode, reuse, compression, iterations] = args else {
        return Err(format!("expected 5 arguments, got {}", args.len()));
    };
    let case = match case.as_str() {
        "carsales" => CaseName::CarSales,
        "catrank" => CaseName::CatRank,
        "eval" => CaseName::Eval,
        other => return Err(format!("unknown CASE {other:?}")),
    };
    let mode = match mode.as_str() {
        "object" => Mode::Object,
        "bytes" => Mode::Bytes,
        "pipe" => Mode::Pipe,
        "client" => Mode::Client,
        "server" => Mode::Server,
        other => return Err(format!("unknown MODE {other:?}")),
    };
    let reuse = match reuse.as_str() {
        "reuse" => Reuse::Reuse,
        "no-reuse" => Reuse::NoReuse,
        other => return Err(format!("unknown REUSE {other:?}")),
    };
    let compression = match compression.as_str() {
        "none" => Compression::None,
        "packed" => Compression::Packed,
        other => return Err(format!("unknown COMPRESSION {other:?}")),
    };
    if mode == Mode::Object && compression == Compression::Packed {
        return Err("object mode serialises nothing: COMPRESSION must be none".into());
    }
    // Digits only: no sign, no spaces (u64::from_str would take "+10").
    let digits = !iterations.is_empty() && iterations.bytes().all(|b| b.is_ascii_digit());
    let iterations = match iterations.parse::<u64>() {
        Ok(n) if digits && (1..=MAX_ITERATIONS).contains(&n) => n,
        _ => {
            return Err(format!(
                "ITERS must be 1 .. {MAX_ITERATIONS}, not {iterations:?}"
            ))
        }
    };
    Ok(Config {
        case,
        mode,
        reuse,
        compression,
        iterations,
    })
}

/// The report of SPEC §5: one line of JSON, members in the SPEC's order. Every string is one
/// of this program's constants (no escaping needed) and every number is finite.
fn report(config: &Config, figures: &Figures) -> String {
    let mut json = format!(
        "{{\"program\": \"{PROGRAM}\", \"library\": \"{}\", \"case\": \"{}\", \"mode\": \"{}\", \
         \"reuse\": \"{}\", \"compression\": \"{}\", \"iterations\": {}, \"warmup\": {}, \
         \"setup_s\": {}, \"warmup_s\": {}, \"elapsed_s\": {}, \"cpu_s\": {}, \
         \"request_bytes\": {}, \"response_bytes\": {}, \"checked\": {}",
        modes::LIBRARY,
        config.case.as_str(),
        config.mode.as_str(),
        config.reuse.as_str(),
        config.compression.as_str(),
        config.iterations,
        config.warmup(),
        figures.setup_s,
        figures.warmup_s,
        figures.elapsed_s,
        figures.cpu_s.max(0.0),
        figures.request_bytes,
        figures.response_bytes,
        figures.checked,
    );
    if let Some(server_cpu_s) = figures.server_cpu_s {
        json.push_str(&format!(", \"server_cpu_s\": {server_cpu_s}"));
    }
    json.push('}');
    json
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn parses_the_five_words() {
        let config = parse(&args("catrank pipe no-reuse packed 1000")).unwrap();
        assert_eq!(
            config,
            Config {
                case: CaseName::CatRank,
                mode: Mode::Pipe,
                reuse: Reuse::NoReuse,
                compression: Compression::Packed,
                iterations: 1000,
            }
        );
        assert_eq!(config.warmup(), 50);
        assert_eq!(
            config.argv(Mode::Server),
            ["catrank", "server", "no-reuse", "packed", "1000"]
        );
    }

    #[test]
    fn refuses_bad_command_lines() {
        for line in [
            "",
            "carsales bytes reuse none",
            "carsales bytes reuse none 10 extra",
            "cats bytes reuse none 10",
            "carsales mmap reuse none 10",
            "carsales bytes sometimes none 10",
            "carsales bytes reuse snappy 10",
            "carsales object reuse packed 10",
            "carsales bytes reuse none 0",
            "carsales bytes reuse none -5",
            "carsales bytes reuse none ten",
            "carsales bytes reuse none 1000000001",
            "carsales bytes reuse none +10",
        ] {
            assert!(parse(&args(line)).is_err(), "{line:?} was accepted");
        }
        assert!(parse(&args("eval server no-reuse none 1000000000")).is_ok());
    }

    #[test]
    fn report_is_one_json_line_with_the_specs_members() {
        let config = parse(&args("eval pipe no-reuse none 200")).unwrap();
        let figures = Figures {
            setup_s: 0.001,
            warmup_s: 0.5,
            elapsed_s: 2.25,
            cpu_s: 1.0,
            request_bytes: 123,
            response_bytes: 45,
            checked: 210,
            server_cpu_s: Some(0.75),
        };
        let line = report(&config, &figures);
        assert_eq!(
            line,
            "{\"program\": \"capnp-rust\", \"library\": \"capnp (Rust) 0.27.3\", \
             \"case\": \"eval\", \"mode\": \"pipe\", \"reuse\": \"no-reuse\", \
             \"compression\": \"none\", \"iterations\": 200, \"warmup\": 10, \
             \"setup_s\": 0.001, \"warmup_s\": 0.5, \"elapsed_s\": 2.25, \"cpu_s\": 1, \
             \"request_bytes\": 123, \"response_bytes\": 45, \"checked\": 210, \
             \"server_cpu_s\": 0.75}"
        );
        assert!(!line.contains('\n'));
    }
}
