//! `orpc-agent`: check and inspect capability declarations; read and write
//! `std:` metadata, component sections and input hashes.
//!
//! Exit codes: 0 success; 1 the input was read and has problems; 2 usage
//! errors and input that cannot be read or parsed (named with file, line
//! and column).

mod act_cmd;
mod declarations_cmd;

use std::process::ExitCode;

const USAGE: &str = "\
usage: orpc-agent <command> [args]

Capability declarations (JSON or TOML, by extension):
  check FILE                 list every problem; exit 1 if there is any
  inspect FILE [--json]      resolved values, surfaces, tool names, warnings

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
        "meta" | "component" | "manifest" | "hash" => act_cmd::run(command, rest),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            0
        }
        "-V" | "--version" => {
            println!("orpc-agent {}", env!("CARGO_PKG_VERSION"));
            0
        }
        other => {
            eprintln!("orpc-agent: unknown command `{other}`\n\n{USAGE}");
            2
        }
    }
}
