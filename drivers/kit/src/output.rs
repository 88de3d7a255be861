//! A driver's `main`: parse the command line, run one trial, print one JSON document.
//!
//! - success: the report on stdout, exit status 0;
//! - a failed trial: `{"error": "..."}` on stdout, exit status 1;
//! - a bad command line: `{"error": "bad command line: ..."}` on stdout and clap's full message
//!   on stderr, exit status 2 (`--help` and `--version` print as usual and exit 0).
//!
//! so a harness always has a JSON document to read, whatever happened.

use crate::error::Result;
use clap::error::ErrorKind;
use clap::Parser;
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// A driver's command line: clap's parsing plus the checks clap cannot make.
pub trait DriverArgs: Parser {
    /// Ranges and combinations; a message for a usage error.
    fn validate(&self) -> std::result::Result<(), String>;
}

/// Exit status of a bad command line (clap's own).
pub const USAGE: u8 = 2;

/// Runs `trial` on the process's arguments and prints its document.
pub fn main<A, R, F>(trial: F) -> ExitCode
where
    A: DriverArgs,
    R: Serialize,
    F: FnOnce(&A) -> Result<R>,
{
    let name = A::command().get_name().to_string();
    let (document, status) = match parse::<A, _, _>(std::env::args_os()) {
        Ok(args) => match trial(&args) {
            // Straight to text, so members keep the report's order (a Value would sort them).
            Ok(report) => (serde_json::to_string(&report), ExitCode::SUCCESS),
            Err(failure) => (
                Ok(error_document(failure.message()).to_string()),
                ExitCode::FAILURE,
            ),
        },
        Err(Usage::Exit(e)) => e.exit(),
        Err(Usage::Bad(e)) => {
            // The full message (with the usage line) for a person; the gist for the harness.
            let _ = e.print();
            let gist = gist(&e);
            (
                Ok(error_document(&format!("bad command line: {gist}")).to_string()),
                ExitCode::from(USAGE),
            )
        }
    };
    let printed = document
        .map_err(std::io::Error::from)
        .and_then(|json| writeln!(std::io::stdout().lock(), "{json}"));
    match printed {
        Ok(()) => status,
        Err(e) => {
            eprintln!("{name}: cannot write the result: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Why parsing did not give arguments.
pub enum Usage {
    /// --help, --version: clap prints them and exits 0.
    Exit(clap::Error),
    /// A usage error.
    Bad(clap::Error),
}

/// Parses and validates a command line.
pub fn parse<A, I, T>(argv: I) -> std::result::Result<A, Usage>
where
    A: DriverArgs,
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args = A::try_parse_from(argv).map_err(|e| match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => Usage::Exit(e),
        _ => Usage::Bad(e),
    })?;
    args.validate()
        .map_err(|message| Usage::Bad(A::command().error(ErrorKind::ValueValidation, message)))?;
    Ok(args)
}

/// The first paragraph of clap's message on one line, without its "error: " prefix.
fn gist(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let paragraph: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|line| !line.is_empty())
        .collect();
    let joined = paragraph.join(" ");
    joined
        .strip_prefix("error: ")
        .unwrap_or(&joined)
        .to_string()
}

fn error_document(message: &str) -> serde_json::Value {
    serde_json::json!({ "error": message })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::CommonArgs;

    #[derive(Parser, Debug)]
    #[command(name = "test-driver")]
    struct Args {
        #[arg(long)]
        count: u64,
        #[command(flatten)]
        common: CommonArgs,
    }

    impl DriverArgs for Args {
        fn validate(&self) -> std::result::Result<(), String> {
            if self.count == 0 {
                return Err("--count must be at least 1".to_string());
            }
            self.common.validate()
        }
    }

    fn bad(line: &str) -> String {
        match parse::<Args, _, _>(line.split_whitespace()) {
            Err(Usage::Bad(e)) => gist(&e),
            Err(Usage::Exit(_)) => panic!("{line}: not a usage error"),
            Ok(_) => panic!("{line}: accepted"),
        }
    }

    #[test]
    fn usage_errors_are_summed_up_in_one_line() {
        assert!(parse::<Args, _, _>("d --count 1 -- x".split_whitespace()).is_ok());
        let gist = bad("d --count 0 -- x");
        assert_eq!(gist, "--count must be at least 1");
        assert!(bad("d --count 1 --timeout-s 0 -- x").contains("--timeout-s"));
        assert!(bad("d --count x -- x").contains("--count"));
        let missing = bad("d --count 1");
        assert!(missing.contains("IMPL_ARGV"), "{missing}");
        assert!(matches!(
            parse::<Args, _, _>(["d", "--help"]),
            Err(Usage::Exit(_))
        ));
        assert_eq!(
            error_document("x").to_string(),
            r#"{"error":"x"}"#.to_string()
        );
    }
}
