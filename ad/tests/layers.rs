//! The layers of adc-ad (drawn in `src/lib.rs`): every `crate::` reference outside test
//! code must point to a module of the same layer or a lower one, and the modules must
//! not import one another in a cycle. The check reads the sources, so an upward edge
//! fails here before it grows into a cycle.
//!
//! What counts as a reference: `crate::m` in a `use` (including each member of a
//! `crate::{a, b::c}` group) or a path in code, `super::` chains that climb to the crate
//! root, and the crate root's re-exports (`crate::AdError` is a use of `error`).
//! Comments, string literals, `#[cfg(test)]` items and `tests.rs` files do not count.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

/// Top to bottom. A module may use modules of its own layer (without a cycle, checked
/// apart) and of the layers below it.
const LAYERS: &[(&str, &[&str])] = &[
    ("Enzyme API lowering", &["enzyme_api"]),
    ("memoization and orchestration", &["differentiator"]),
    ("synthesis", &["reverse", "forward"]),
    ("planning", &["cache"]),
    ("analyses", &["activity", "typetree", "callees", "custom", "thread_sharing"]),
    ("rules", &["rules"]),
    ("vocabulary", &["request", "error", "toggles"]),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, modules)| modules.contains(&module))
}

/// One reference from a file to a top-level module.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Reference {
    line: usize,
    module: String,
}

/// `source` with comments and the contents of string and char literals blanked (newlines
/// kept, so byte offsets and line numbers still match).
fn blank_comments_and_strings(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = source[i..].find('\n').map_or(bytes.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                let mut j = i;
                while j < bytes.len() {
                    if bytes[j..].starts_with(b"/*") {
                        depth += 1;
                        j += 2;
                    } else if bytes[j..].starts_with(b"*/") {
                        depth -= 1;
                        j += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'r' if matches!(bytes.get(i + 1), Some(b'"' | b'#'))
                && (i == 0 || !is_ident(bytes[i - 1])) =>
            {
                let hashes = bytes[i + 1..].iter().take_while(|b| **b == b'#').count();
                let open = i + 1 + hashes;
                if bytes.get(open) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let end = source[open + 1..]
                    .find(&close)
                    .map_or(bytes.len(), |n| open + 1 + n + close.len());
                blank(&mut out, open + 1, end.saturating_sub(close.len()).max(open + 1));
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i + 1, j.min(bytes.len()));
                i = j + 1;
            }
            // A char literal (not a lifetime): 'x', '\n', '\''.
            b'\'' if bytes.get(i + 2) == Some(&b'\'') || bytes.get(i + 1) == Some(&b'\\') => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b'\'' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i + 1, j.min(bytes.len()));
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).expect("only ASCII bytes were replaced")
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `code` (comments and strings already blanked) with every `#[cfg(test)]` item blanked:
/// the attribute up to the end of the item (its `;`, or its matching `}`).
fn blank_test_items(code: &str) -> String {
    let mut out = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(found) = code[from..].find("#[cfg(test)]") {
        let start = from + found;
        let bytes = code.as_bytes();
        let mut j = start + "#[cfg(test)]".len();
        let mut depth = 0usize;
        while j < bytes.len() {
            match bytes[j] {
                b'{' | b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        j += 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    j += 1;
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        for b in &mut out[start..j.min(bytes.len())] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        from = j.min(bytes.len());
    }
    String::from_utf8(out).expect("only ASCII bytes were replaced")
}

/// Reads an identifier at `i` (after spaces); returns it and the offset after it.
fn ident_at(code: &str, mut i: usize) -> (String, usize) {
    let bytes = code.as_bytes();
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    while i < bytes.len() && is_ident(bytes[i]) {
        i += 1;
    }
    (code[start..i].to_string(), i)
}

/// The first segments of the members of the brace group opening at `open`
/// (`{a, b::c, d::{e, f}}` gives `a`, `b`, `d`), with their offsets.
fn group_heads(code: &str, open: usize) -> Vec<(String, usize)> {
    let bytes = code.as_bytes();
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut expect_head = true;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                depth += 1;
                expect_head = depth == 1;
                i += 1;
            }
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
                i += 1;
            }
            b',' => {
                expect_head = depth == 1;
                i += 1;
            }
            b if expect_head && is_ident(b) => {
                let (name, end) = ident_at(code, i);
                heads.push((name, i));
                expect_head = false;
                i = end;
            }
            _ => i += 1,
        }
    }
    heads
}

/// The top-level modules `source` refers to outside test code. `module_path` is the file's
/// module inside the crate (`["reverse", "cache"]` for `src/reverse/cache.rs`), which
/// `super::` climbs; `reexports` maps the crate root's re-exported names to their modules.
fn references(
    source: &str,
    module_path: &[String],
    reexports: &HashMap<String, String>,
) -> Vec<Reference> {
    let code = blank_test_items(&blank_comments_and_strings(source));
    let line_of = |offset: usize| code[..offset].matches('\n').count() + 1;
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut push = |name: String, offset: usize| {
        let module = reexports.get(&name).cloned().unwrap_or(name);
        if !module.is_empty() && module != "self" {
            found.push(Reference { line: line_of(offset), module });
        }
    };
    let mut i = 0;
    while i < bytes.len() {
        let at_word = i == 0 || !(is_ident(bytes[i - 1]) || bytes[i - 1] == b':');
        if !at_word {
            i += 1;
            continue;
        }
        // The number of module levels the path climbs: `crate::` all, `super::` one each.
        let (root, after) = if code[i..].starts_with("crate::") {
            (true, i + "crate::".len())
        } else if code[i..].starts_with("super::") {
            let mut j = i;
            let mut levels = 0;
            while code[j..].starts_with("super::") {
                levels += 1;
                j += "super::".len();
            }
            (levels >= module_path.len(), j)
        } else {
            i += 1;
            continue;
        };
        if root {
            let rest = code[after..].trim_start();
            let rest_at = bytes.len() - rest.len();
            if rest.starts_with('{') {
                for (name, offset) in group_heads(&code, rest_at) {
                    push(name, offset);
                }
            } else {
                let (name, _) = ident_at(&code, after);
                push(name, i);
            }
        }
        i = after;
    }
    found
}

/// `pub use m::{A, B};` and `pub use m::A;` lines of the crate root: name -> module.
fn root_reexports(lib: &str) -> HashMap<String, String> {
    let code = blank_comments_and_strings(lib);
    let mut map = HashMap::new();
    for statement in code.split(';') {
        let statement = statement.trim();
        let Some(path) = statement.strip_prefix("pub use ") else { continue };
        let Some((module, names)) = path.split_once("::") else { continue };
        let names = names.trim_start_matches('{').trim_end_matches('}');
        for name in names.split(',') {
            let name = name.trim();
            let name = name.rsplit("::").next().unwrap_or(name);
            let name = name.split(" as ").last().unwrap_or(name).trim();
            if !name.is_empty() {
                map.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    map
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> =
        fs::read_dir(dir).expect("readable").map(|e| e.expect("entry").path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/reverse/cache.rs` -> `["reverse", "cache"]`; `src/reverse/mod.rs` -> `["reverse"]`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> =
        relative.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

#[test]
fn no_module_imports_a_layer_above_it_and_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let reexports = root_reexports(&fs::read_to_string(src.join("lib.rs")).expect("lib.rs"));
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let path = module_path(&src, file);
        // The crate root only declares modules; test modules in their own files
        // (`mod tests;` under `#[cfg(test)]`) may use anything.
        if path == ["lib"] || path.last().is_some_and(|p| p == "tests") {
            continue;
        }
        let from = &path[0];
        let Some(from_layer) = layer_of(from) else {
            violations.push(format!("{}: module `{from}` has no layer", file.display()));
            continue;
        };
        let source = fs::read_to_string(file).expect("readable source");
        let file = file.strip_prefix(&src).expect("under src");
        for reference in references(&source, &path, &reexports) {
            let to = &reference.module;
            if to == from {
                continue;
            }
            match layer_of(to) {
                None => violations.push(format!(
                    "{}:{}: `{from}` -> `{to}`: `{to}` has no layer",
                    file.display(),
                    reference.line
                )),
                Some(to_layer) if to_layer < from_layer => violations.push(format!(
                    "{}:{}: `{from}` ({}) -> `{to}` ({}) points upward",
                    file.display(),
                    reference.line,
                    LAYERS[from_layer].0,
                    LAYERS[to_layer].0
                )),
                Some(_) => {
                    edges.entry(from.clone()).or_default().insert(to.clone());
                }
            }
        }
    }
    assert!(violations.is_empty(), "layer violations:\n{}", violations.join("\n"));
    // Within a layer: no cycle (depth-first search for a back edge).
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut HashMap<String, bool>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(node) {
            Some(true) => return None,
            Some(false) => {
                let start = stack.iter().position(|n| n == node).expect("on the stack");
                let mut cycle = stack[start..].to_vec();
                cycle.push(node.to_string());
                return Some(cycle);
            }
            None => {}
        }
        state.insert(node.to_string(), false);
        stack.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, state, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        state.insert(node.to_string(), true);
        None
    }
    let mut state = HashMap::new();
    for node in edges.keys() {
        let cycle = visit(node, &edges, &mut state, &mut Vec::new());
        assert!(cycle.is_none(), "import cycle: {}", cycle.unwrap_or_default().join(" -> "));
    }
}

#[test]
fn the_reference_finder_sees_groups_paths_and_super_and_skips_tests_and_comments() {
    let source = r#"
//! Mentions `crate::in_doc` in a comment.
use std::fmt;
use crate::{grouped, nested::deep::{Thing, Other}, also::{a, b}};
use super::super::climbed::X;
use super::sibling;
/* crate::in_block_comment */
fn f() -> Result<(), crate::AdError> {
    let s = "crate::in_string";
    let t = r"crate::in_raw_string";
    let c = '"';
    crate::qualified::call();
    Ok(())
}
#[cfg(test)]
fn helper() { crate::test_helper::x(); }
#[cfg(test)]
use crate::test_import;
#[cfg(test)]
mod tests {
    use crate::in_tests;
    fn g() { if true { crate::deeper::y(); } }
}
fn after() { crate::after_tests::z(); }
"#;
    let reexports = HashMap::from([("AdError".to_string(), "error".to_string())]);
    let path = vec!["reverse".to_string(), "cache".to_string()];
    let found: Vec<(usize, String)> =
        references(source, &path, &reexports).into_iter().map(|r| (r.line, r.module)).collect();
    assert_eq!(
        found,
        [
            (4, "grouped".to_string()),
            (4, "nested".to_string()),
            (4, "also".to_string()),
            (5, "climbed".to_string()),
            (8, "error".to_string()),
            (12, "qualified".to_string()),
            (24, "after_tests".to_string()),
        ]
    );
    let lib = "pub mod a;\npub use a::{One, Two as Three};\npub use b::Four;\n";
    let map = root_reexports(lib);
    assert_eq!(map.get("One").map(String::as_str), Some("a"));
    assert_eq!(map.get("Three").map(String::as_str), Some("a"));
    assert_eq!(map.get("Four").map(String::as_str), Some("b"));
}
