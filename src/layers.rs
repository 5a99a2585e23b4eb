//! The crate's layers, checked: every `crate::` path in a module's code
//! (its tests included) names a module of its own layer or one below.
//!
//! The table is the crate docs' "Layers" table; a module not in it fails
//! the check, so a new top-level module has to be given a place.

use std::fs;
use std::path::{Path, PathBuf};

/// From the bottom: a module may import the modules of its own row and of
/// the rows before it. The pipeline (`stages`, and its items re-exported at
/// the crate root) is below them all. A row names modules by path; the
/// longest prefix decides (`mcp::client` is low, the rest of `mcp` high).
const LAYERS: &[&[&str]] = &[
    &["access", "diff", "error_code", "limits"],
    &["message", "scheduler", "turn", "loop_guard"],
    &["fs"],
    &["checkpoint"],
    &["process"],
    &["sandbox"],
    &["shell"],
    &["tools"],
    &["approval"],
    &["hooks"],
    &["mcp::client"],
    &["config"],
    &["session"],
    &["mcp"],
];

/// The layer of a module path (`["mcp", "client", "tool"]`), by the
/// longest prefix in [`LAYERS`]; `None` when no row names it.
fn layer_of(path: &[&str]) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (layer, row) in LAYERS.iter().enumerate() {
        for module in *row {
            let parts: Vec<&str> = module.split("::").collect();
            if path.len() >= parts.len()
                && path[..parts.len()] == parts[..]
                && best.is_none_or(|(len, _)| parts.len() > len)
            {
                best = Some((parts.len(), layer));
            }
        }
    }
    best.map(|(_, layer)| layer)
}

/// The module path of a source file below `src/`.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Every `crate::a::b` in code (comments and doc comments left out), as
/// the line number and the path's first two segments.
fn crate_paths(source: &str) -> Vec<(usize, Vec<String>)> {
    let code: String = source
        .lines()
        .map(|line| line.find("//").map_or(line, |at| &line[..at]))
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("crate::") {
        let start = from + at;
        from = start + "crate::".len();
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `agentcore_stages::…`, `mycrate::…`
        }
        let line = code[..start].matches('\n').count() + 1;
        let rest = &code[from..];
        let paths: Vec<&str> = match rest.strip_prefix('{') {
            // `crate::{a::B, c}`, over lines too (not nested).
            Some(group) => group.split('}').next().unwrap_or("").split(',').collect(),
            None => vec![rest],
        };
        for path in paths {
            let segments: Vec<String> = path
                .trim()
                .split("::")
                .take(2)
                .map(|s| {
                    s.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect()
                })
                .take_while(|s: &String| !s.is_empty())
                .collect();
            if !segments.is_empty() {
                found.push((line, segments));
            }
        }
    }
    found
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("src entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_imports_only_its_own_layer_and_those_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("below src");
        // The binary (`main.rs`, `cli/`) reaches the library as `agentcore::`;
        // the crate root only declares the layers.
        if relative == Path::new("main.rs")
            || relative == Path::new("lib.rs")
            || relative == Path::new("layers.rs")
            || relative.starts_with("cli")
        {
            continue;
        }
        let module = module_of(relative);
        let module_refs: Vec<&str> = module.iter().map(String::as_str).collect();
        let Some(own) = layer_of(&module_refs) else {
            wrong.push(format!(
                "{}: module `{}` has no layer in LAYERS",
                relative.display(),
                module.join("::")
            ));
            continue;
        };
        let source = fs::read_to_string(file).expect("source is UTF-8");
        for (line, target) in crate_paths(&source) {
            let Some(first) = target.first() else {
                continue;
            };
            // `crate::Tool`, `crate::texts`, `crate::stages`: the pipeline.
            if first.starts_with(|c: char| c.is_uppercase())
                || first == "stages"
                || first == "texts"
            {
                continue;
            }
            let target_refs: Vec<&str> = target.iter().map(String::as_str).collect();
            match layer_of(&target_refs) {
                Some(layer) if layer <= own => {}
                Some(layer) => wrong.push(format!(
                    "{}:{line}: `{}` (layer {own}) imports `crate::{}` (layer {layer}, above it)",
                    relative.display(),
                    module.join("::"),
                    target.join("::")
                )),
                None => wrong.push(format!(
                    "{}:{line}: `crate::{}` is in no layer",
                    relative.display(),
                    target.join("::")
                )),
            }
        }
    }
    assert!(wrong.is_empty(), "layer violations:\n{}", wrong.join("\n"));
}

#[test]
fn the_check_sees_a_path_into_a_higher_layer() {
    let found = crate_paths(
        "use crate::session::Session; // crate::mcp\n/// [`x`](crate::hooks)\nuse mycrate::mcp;\nuse crate::{Tool,\n    approval::Mode};",
    );
    let path = |a: &str, b: &str| vec![a.to_owned(), b.to_owned()];
    assert_eq!(
        found,
        vec![
            (1, path("session", "Session")),
            (4, vec!["Tool".to_owned()]),
            (4, path("approval", "Mode")),
        ]
    );
    assert_eq!(layer_of(&["mcp", "client", "tool"]), Some(10));
    assert_eq!(layer_of(&["mcp", "http"]), Some(13));
    assert!(layer_of(&["session"]) > layer_of(&["mcp", "client"]));
    assert_eq!(layer_of(&["nowhere"]), None);
}
