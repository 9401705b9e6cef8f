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

/// `text` as code only: comments, string and character literals blanked
/// (so a brace or a `crate::` in them counts for nothing), and each
/// `#[cfg(test)] mod … { … }` left out (a unit-test module may reach
/// anywhere), wherever in the file it is.
fn code_of(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut code = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        let starts = |s: &str| rest.iter().take(s.len()).copied().eq(s.chars());
        if starts("//") {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if starts("/*") {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i..].starts_with(&['/', '*']) {
                    depth += 1;
                    i += 2;
                } else if chars[i..].starts_with(&['*', '/']) {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if chars[i] == 'r' && matches!(rest.get(1), Some('"' | '#')) {
            // A raw string: r"…", r#"…"#, …
            let hashes = rest[1..].iter().take_while(|c| **c == '#').count();
            if rest.get(1 + hashes) == Some(&'"') {
                i += 2 + hashes;
                let close: Vec<char> = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                while i < chars.len() && !chars[i..].starts_with(&close) {
                    i += 1;
                }
                i += close.len();
                code.push_str("\"\"");
            } else {
                code.push('r');
                i += 1;
            }
        } else if chars[i] == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            code.push_str("\"\"");
        } else if chars[i] == '\'' && (rest.get(2) == Some(&'\'') || rest.get(1) == Some(&'\\')) {
            // A character literal ('{', '\n', '\u{7b}'); a lifetime stays.
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            code.push_str("' '");
        } else {
            code.push(chars[i]);
            i += 1;
        }
    }
    without_test_modules(&code)
}

/// `code` without its `#[cfg(test)] mod name { … }` items.
fn without_test_modules(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let item = after.trim_start();
        let Some(body) = item
            .strip_prefix("mod ")
            .and_then(|m| m.find('{').map(|b| &m[b..]))
        else {
            out.push_str("#[cfg(test)]");
            rest = after;
            continue;
        };
        let mut depth = 0usize;
        let mut end = body.len();
        for (i, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &body[end..];
    }
    out.push_str(rest);
    out
}

/// The first segment of each path in a `use` tree's text: `a::b` → `a`,
/// `{a::{b, c}, d}` → `a`, `d`.
fn first_segments(tree: &str, out: &mut BTreeSet<String>) {
    let tree = tree.trim_start();
    let Some(group) = tree.strip_prefix('{') else {
        let name: String = tree
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
        return;
    };
    // The group's top-level items, up to its closing brace.
    let (mut depth, mut item_start) = (0usize, 0usize);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                first_segments(&group[item_start..i], out);
                return;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                first_segments(&group[item_start..i], out);
                item_start = i + 1;
            }
            _ => {}
        }
    }
}

/// The modules `text` names as `crate::<module>` or in a grouped
/// `crate::{<module>, …}` (over as many lines as it takes), in code: not
/// in comments or literals, not in a unit-test module.
fn referenced(text: &str) -> BTreeSet<String> {
    let code = code_of(text);
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let before = code[..i].chars().next_back();
        // `$crate::` (a macro's) and `my_crate::` are not this crate's paths.
        if before.is_some_and(|c| c == '$' || c == '_' || c.is_ascii_alphanumeric()) {
            continue;
        }
        first_segments(&code[i + "crate::".len()..], &mut out);
    }
    out
}

#[test]
fn the_reader_sees_grouped_imports_over_lines_and_code_after_a_test_module() {
    let text = r#"
use crate::{
    error::CapabilityError,
    meta::{AgentMeta, vocab_of},
};
// crate::commented
const S: &str = "crate::quoted";
const C: char = '{';
#[cfg(test)]
mod tests {
    use crate::policy::Anything;
    fn f() { let _ = '}'; }
}
fn after() -> crate::approval::Store { todo!() }
"#;
    let got: Vec<String> = referenced(text).into_iter().collect();
    assert_eq!(got, ["approval", "error", "meta"]);
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
