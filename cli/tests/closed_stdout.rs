//! The CLI on a closed stdout (`orpc-agent meta keys | head -3` once `head`
//! has gone): it ends quietly with 0 instead of panicking (issue 15).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};

#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    for args in [
        &["meta", "keys"][..],
        &["--help"][..],
        &[
            "inspect",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../examples/declarations/orders.json"
            ),
        ][..],
    ] {
        // A pipe whose reading end is closed before the command writes: every
        // write fails with EPIPE, whatever the timing.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_orpc-agent"))
            .args(args)
            .stdout(Stdio::from(writer))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}
