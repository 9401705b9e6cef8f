//! The core's integration tests, one module per file beside this one, built
//! as one test binary: each file used to be its own binary carrying its own
//! copy of every dependency (~35 MB apiece, ~0.6 GB in all, and a link
//! each). `cargo test -p orpc-agent-core --test core <module>::` runs one
//! file's tests. `approval_postgres.rs` stays its own target: it is built
//! with the `postgres` feature by `make test-postgres`.

mod pipeline_support;
#[path = "support/approval_suite.rs"]
mod suite;

mod act_component;
mod act_props;
mod act_rfc8949;
mod act_vectors;
mod approval_store;
mod descriptor_schema;
mod faults;
mod fuzz_regressions;
mod hash_vectors;
mod layering;
mod leak_scan;
mod limits;
mod pipeline_export;
mod pipeline_machine;
mod pipeline_vectors;
mod progress_vectors;
mod registry;
mod registry_vectors;
mod security_invariants;
mod sqlite_disk_faults;
