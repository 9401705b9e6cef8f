//! The CLI's integration tests, one module per file beside this one, built
//! as one test binary (as the core's: each file was its own binary with its
//! own copy of the dependencies).

mod binary;
mod cedar_recipes;
mod closed_stdout;
mod declarations;
