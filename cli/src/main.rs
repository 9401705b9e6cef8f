//! `orpc-agent`: check and inspect capability declarations; evaluate Cedar
//! policies; read and write
//! `std:` metadata, component sections and input hashes.
//!
//! Exit codes: 0 success; 1 the input was read and has problems; 2 usage
//! errors and input that cannot be read or parsed (named with file, line
//! and column).

/// `println!` for the command's output, which ends the process quietly
/// when stdout is closed (`orpc-agent meta keys | head -3`): a reader that
/// stopped reading is not an error, and `println!` would panic there.
macro_rules! outln {
    ($($t:tt)*) => { $crate::write_stdout(format_args!("{}\n", format_args!($($t)*))) };
}

/// `print!` with [`outln!`]'s handling of a closed stdout.
macro_rules! out {
    ($($t:tt)*) => { $crate::write_stdout(format_args!($($t)*)) };
}

mod act_cmd;
mod declarations_cmd;
mod policy_cmd;

use std::process::ExitCode;

const USAGE: &str = "\
usage: orpc-agent <command> [args]

Capability declarations (JSON or TOML, by extension):
  check FILE                 list every problem; exit 1 if there is any
  inspect FILE [--json]      resolved values, surfaces, tool names, warnings
                             (check and inspect type-check Cedar policies too)

Cedar policies:
  policy eval POLICY.cedar REQUEST.json [--declarations FILE] [--actor-attributes SCHEMA.json] [--json]
                             type-check, then evaluate one request: the decision and
                             the ids of the policies that determined it

std: metadata and components (--hex: CBOR read or written as hex text instead of bytes):
  meta decode FILE [--hex] [--diag]   CBOR metadata → readable JSON (or diagnostic notation)
  meta encode FILE.json [-o OUT] [--hex]
  meta check --position POSITION FILE [--strict] [--hex]
  meta keys                  the std: key table
  component inspect FILE.wasm
  component embed --manifest act.toml IN.wasm -o OUT.wasm
  manifest check act.toml
  hash --capability ID INPUT.json     lowercase hex approval input hash

Exit codes: 0 ok, 1 problems found, 2 usage or unreadable input.";

/// Writes the command's output. A closed pipe ends the process with 0 (the
/// reader had what it wanted); any other write failure with 2.
fn write_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("orpc-agent: cannot write the output: {e}");
        std::process::exit(2);
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    ExitCode::from(run(&args))
}

fn run(args: &[String]) -> u8 {
    let Some((command, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return 2;
    };
    match command.as_str() {
        "check" => declarations_cmd::check(rest),
        "inspect" => declarations_cmd::inspect(rest),
        "policy" => policy_cmd::run(rest),
        "meta" | "component" | "manifest" | "hash" => act_cmd::run(command, rest),
        "-h" | "--help" | "help" => {
            outln!("{USAGE}");
            0
        }
        "-V" | "--version" => {
            outln!("orpc-agent {}", env!("CARGO_PKG_VERSION"));
            0
        }
        other => {
            eprintln!("orpc-agent: unknown command `{other}`\n\n{USAGE}");
            2
        }
    }
}
