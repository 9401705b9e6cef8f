#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The core's top-level modules form no import cycle: each layer depends
//! only on layers below it (`vocab` under `meta` and `policy`, `meta` under
//! `registry`, `registry` under its views such as `descriptor`, `pipeline`
//! under the adapters' `mcp` and `agent_tools`, and `ffi` above all). Read
//! from the sources: a `crate::<module>` path in code (not in a comment or
//! a unit-test module) is an edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The modules `text` names as `crate::<module>` or in a grouped
/// `crate::{<module>, …}`, outside line comments and outside the unit-test
/// module (`#[cfg(test)] mod tests`, which may reach anywhere).
fn referenced(text: &str) -> BTreeSet<String> {
    let text = text.replace("\r\n", "\n");
    let code = text
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default();
    let module_at = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        for (i, _) in line.match_indices("crate::") {
            let rest = &line[i + 7..];
            let names: Vec<String> = match rest.strip_prefix('{') {
                // One line of a grouped import: each item's first segment.
                Some(group) => group
                    .split('}')
                    .next()
                    .unwrap_or_default()
                    .split(',')
                    .map(module_at)
                    .collect(),
                None => vec![module_at(rest)],
            };
            out.extend(names.into_iter().filter(|n| !n.is_empty()));
        }
    }
    out
}

fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let is_rust = path.extension().is_some_and(|e| e == "rs");
        if name == "lib" || !(path.is_dir() || is_rust) {
            continue;
        }
        let mut files = Vec::new();
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else {
            files.push(path);
        }
        let edges = graph.entry(name.clone()).or_default();
        for file in files {
            let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
            edges.extend(referenced(&text).into_iter().filter(|m| *m != name));
        }
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for edges in graph.values_mut() {
        edges.retain(|m| modules.contains(m));
    }
    graph
}

/// A cycle through `from`, as the path of modules, if there is one.
fn cycle_from(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    let mut stack = vec![(from.to_owned(), vec![from.to_owned()])];
    let mut seen = BTreeSet::new();
    while let Some((at, path)) = stack.pop() {
        for next in &graph[&at] {
            if next == from {
                let mut cycle = path.clone();
                cycle.push(from.to_owned());
                return Some(cycle);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn the_core_modules_import_no_cycle() {
    let graph = module_graph();
    assert!(graph.contains_key("pipeline") && graph["ffi"].contains("pipeline"));
    let cycles: Vec<String> = graph
        .keys()
        .filter_map(|m| cycle_from(&graph, m))
        .map(|c| c.join(" → "))
        .collect();
    assert!(cycles.is_empty(), "import cycles: {cycles:#?}");
}
