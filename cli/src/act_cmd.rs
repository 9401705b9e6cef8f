//! `orpc-agent meta|component|manifest|hash` (issue 3). Being built.

/// Runs one of the std:-metadata subcommands; returns the exit code.
pub fn run(command: &str, _args: &[String]) -> u8 {
    eprintln!("orpc-agent {command}: not available in this build yet");
    2
}
