//! `orpc-agent check` and `orpc-agent inspect` over declaration files.

use orpc_agent_core::declaration::{Declarations, Format, PolicyFile};
use orpc_agent_core::registry::{InspectReport, RegistryOptions, inspect_declarations};
use orpc_agent_core::{Problem, RegistryError};

/// Reads and parses a declaration file, or prints why not (exit 2), with
/// the policy files it named.
pub(crate) fn load(path: &str) -> Result<(Declarations, Vec<PolicyFile>), u8> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        eprintln!("orpc-agent: cannot read {path}: {e}");
        2
    })?;
    let report = |e: orpc_agent_core::DeclarationError| {
        match (e.line, e.column) {
            (Some(l), Some(c)) => eprintln!("{path}:{l}:{c}: error: {}", e.message),
            _ => eprintln!("{path}: error: {}", e.message),
        }
        2
    };
    let mut decls = Declarations::parse(&text, Format::from_path(path)).map_err(report)?;
    // `cedarFile`s are relative to the declaration file.
    let base = std::path::Path::new(path)
        .parent()
        .unwrap_or(std::path::Path::new(""));
    let files = decls.read_policy_files(base).map_err(report)?;
    Ok((decls, files))
}

/// Everything wrong with a file: option problems first, then capabilities'.
/// A problem in a Cedar text read from a file names that file.
pub(crate) fn report_for((decls, files): (Declarations, Vec<PolicyFile>)) -> InspectReport {
    let (options, mut option_problems) = match decls.registry_options() {
        Ok(o) => (o, Vec::new()),
        Err(RegistryError { problems }) => (RegistryOptions::default(), problems),
    };
    let mut report = inspect_declarations(decls.capabilities, options);
    option_problems.append(&mut report.problems);
    report.problems = option_problems;
    for problem in &mut report.problems {
        let from = files
            .iter()
            .find(|f| f.capability == problem.capability && f.path == problem.path);
        if let Some(f) = from {
            let named = format!("{}, ", f.file.display());
            problem.message = problem.message.replacen("Cedar, ", &named, 1);
        }
    }
    report
}

fn print_problems(path: &str, problems: &[Problem]) {
    for p in problems {
        eprintln!("{path}: {p}");
    }
}

fn one_file(
    args: &[String],
    command: &str,
    extra_flags: &[&str],
) -> Result<(String, Vec<String>), u8> {
    let mut file = None;
    let mut flags = Vec::new();
    for a in args {
        if a.starts_with('-') {
            if !extra_flags.contains(&a.as_str()) {
                eprintln!("orpc-agent {command}: unknown option `{a}`");
                return Err(2);
            }
            flags.push(a.clone());
        } else if file.replace(a.clone()).is_some() {
            eprintln!("orpc-agent {command}: expected one FILE");
            return Err(2);
        }
    }
    match file {
        Some(f) => Ok((f, flags)),
        None => {
            eprintln!("usage: orpc-agent {command} FILE {}", extra_flags.join(" "));
            Err(2)
        }
    }
}

/// `check FILE`: every problem, exit 1 if any.
pub fn check(args: &[String]) -> u8 {
    let (path, _) = match one_file(args, "check", &[]) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let decls = match load(&path) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let count = decls.0.capabilities.len();
    let report = report_for(decls);
    if report.problems.is_empty() {
        outln!(
            "{path}: {count} capabilit{} valid, {} warning{}",
            if count == 1 { "y" } else { "ies" },
            report.warning_count(),
            if report.warning_count() == 1 { "" } else { "s" }
        );
        0
    } else {
        print_problems(&path, &report.problems);
        let n = report.problems.len();
        eprintln!("{path}: {n} problem{}", if n == 1 { "" } else { "s" });
        1
    }
}

/// `inspect FILE [--json]`: the report as a table or as JSON.
pub fn inspect(args: &[String]) -> u8 {
    let (path, flags) = match one_file(args, "inspect", &["--json"]) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let decls = match load(&path) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let report = report_for(decls);
    if flags.iter().any(|f| f == "--json") {
        match serde_json::to_string_pretty(&report.to_json()) {
            Ok(s) => outln!("{s}"),
            Err(e) => {
                eprintln!("orpc-agent: cannot render JSON: {e}");
                return 2;
            }
        }
    } else {
        out!("{}", table(&report));
        print_problems(&path, &report.problems);
    }
    u8::from(!report.problems.is_empty())
}

/// The human-readable report.
fn table(report: &InspectReport) -> String {
    let header = [
        "CAPABILITY",
        "SURFACES",
        "SIDE EFFECT",
        "RISK",
        "TIMEOUT",
        "APPROVAL",
        "RETRY",
        "AI SDK TOOL",
        "MCP TOOL",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|s| (*s).to_owned()).collect()];
    for c in &report.capabilities {
        let r = &c.resolved;
        let text = |v: &serde_json::Value| v.as_str().unwrap_or("-").to_owned();
        let approval = if r["approval"]["required"] == true {
            match r["approval"]["type"].as_str() {
                Some(t) => format!("required ({t})"),
                None => "required".to_owned(),
            }
        } else {
            "-".to_owned()
        };
        let retry = match r["retry"].as_object() {
            None => "-".to_owned(),
            Some(o) if o["eligible"] == true => format!("{}x", o["maxAttempts"]),
            Some(_) => "ineligible".to_owned(),
        };
        rows.push(vec![
            c.id.clone(),
            if c.surfaces.is_empty() {
                "(none)".to_owned()
            } else {
                c.surfaces.join(",")
            },
            text(&r["sideEffect"]),
            text(&r["risk"]),
            format!("{}ms", r["timeoutMs"]),
            approval,
            retry,
            c.ai_sdk_tool_name.clone(),
            c.mcp_tool_name.clone(),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    let warnings: Vec<String> = report
        .capabilities
        .iter()
        .flat_map(|c| {
            c.warnings.iter().map(move |w| {
                format!(
                    "  {}: {}: {} [{}]",
                    c.id,
                    w.path,
                    w.message,
                    w.code.as_str()
                )
            })
        })
        .collect();
    if !warnings.is_empty() {
        out.push_str(&format!("\nwarnings ({}):\n", warnings.len()));
        for w in warnings {
            out.push_str(&w);
            out.push('\n');
        }
    }
    out
}
