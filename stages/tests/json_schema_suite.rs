//! Conformance with the JSON-Schema-Test-Suite, draft 2020-12 (required
//! cases only, not `optional/`): the validator, compiled exactly as the
//! validate stage compiles it, agrees with every case's `valid`, and
//! coercion leaves every valid instance unchanged.
//!
//! The suite's absolute path comes from `AGENTCORE_JSON_SCHEMA_SUITE`. The
//! test is ignored by a plain `cargo test`; run (`--include-ignored`, as
//! .ci/run does) with the variable unset or naming no suite, it fails. Its
//! `remotes/` documents are served from disk, never from a network.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use agentcore_stages::coerce::coerce;
use agentcore_stages::validate::compile_schema_with;
use jsonschema::{Retrieve, Uri};
use serde_json::Value;

/// The environment variable naming the suite's folder.
const SUITE_VAR: &str = "AGENTCORE_JSON_SCHEMA_SUITE";

/// Where the suite's remotes pretend to live.
const REMOTES_BASE: &str = "http://localhost:1234/";

/// Cases the validator gets wrong, as `file / group / test`, with why.
/// The test fails if one of these starts passing (remove it then) or if an
/// unlisted case fails.
const KNOWN_FAILURES: &[(&str, &str)] = &[(
    "vocabulary.json / schema that uses custom metaschema with with no validation vocabulary \
     / no validation: invalid number, but it still validates",
    "the validate stage compiles with `jsonschema::draft202012::options()`, which fixes the \
     dialect to draft 2020-12 with every vocabulary on, so a custom meta-schema's \
     `$vocabulary` (here without the validation vocabulary) is not consulted and `minimum` \
     still asserts; `jsonschema::options()` (dialect from `$schema`) gets this case right",
)];

/// Serves `http://localhost:1234/PATH` from `remotes/PATH`.
struct Remotes {
    root: PathBuf,
}

impl Retrieve for Remotes {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let relative = uri
            .as_str()
            .strip_prefix(REMOTES_BASE)
            .ok_or_else(|| format!("no remote document for {}", uri.as_str()))?;
        let relative = relative.split('#').next().unwrap_or(relative);
        if relative.split('/').any(|part| part == "..") {
            return Err(format!("refusing {}", uri.as_str()).into());
        }
        let text = std::fs::read_to_string(self.root.join(relative))?;
        Ok(serde_json::from_str(&text)?)
    }
}

/// The suite's folder; fails the test when `AGENTCORE_JSON_SCHEMA_SUITE`
/// is unset or names no suite.
fn suite_dir() -> PathBuf {
    let dir = std::env::var_os(SUITE_VAR).filter(|dir| !dir.is_empty());
    let Some(dir) = dir else {
        panic!(
            "this test needs the JSON-Schema-Test-Suite: set {SUITE_VAR} to the absolute path \
             of a clone of https://github.com/json-schema-org/JSON-Schema-Test-Suite"
        );
    };
    let dir = PathBuf::from(dir);
    assert!(
        dir.join("tests/draft2020-12").is_dir(),
        "{SUITE_VAR}={} has no tests/draft2020-12",
        dir.display()
    );
    assert!(dir.is_absolute(), "{SUITE_VAR} must be absolute");
    dir
}

fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// Every required case: (id, schema, data, valid).
fn cases(dir: &Path) -> Vec<(String, Value, Value, bool)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("tests/draft2020-12"))
        .expect("the draft 2020-12 folder lists")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    let mut all = Vec::new();
    for file in files {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Value::Array(groups) = read_json(&file) else {
            panic!("{name} is not an array of groups");
        };
        for group in groups {
            let description = group["description"].as_str().unwrap_or_default();
            let schema = group["schema"].clone();
            for test in group["tests"].as_array().into_iter().flatten() {
                let id = format!(
                    "{name} / {description} / {}",
                    test["description"].as_str().unwrap_or_default()
                );
                let valid = test["valid"].as_bool().expect("every test has `valid`");
                all.push((id, schema.clone(), test["data"].clone(), valid));
            }
        }
    }
    all
}

#[test]
#[ignore = "needs the JSON-Schema test suite (AGENTCORE_JSON_SCHEMA_SUITE)"]
fn validator_agrees_with_the_suite_and_coercion_leaves_valid_instances_alone() {
    let dir = suite_dir();
    let cases = cases(&dir);
    assert!(cases.len() > 1000, "only {} cases found", cases.len());
    let known: BTreeSet<&str> = KNOWN_FAILURES.iter().map(|(id, _)| *id).collect();
    let mut wrong = BTreeSet::new();
    let mut changed = Vec::new();
    for (id, schema, data, valid) in &cases {
        let remotes = Remotes {
            root: dir.join("remotes"),
        };
        let verdict = compile_schema_with(schema, remotes).map(|v| v.is_valid(data));
        if verdict.as_ref() != Ok(valid) {
            wrong.insert(id.clone());
            if !known.contains(id.as_str()) {
                eprintln!("unexpected: {id}: expected valid={valid}, got {verdict:?}");
            }
        }
        if *valid {
            let mut coerced = data.clone();
            match coerce(schema, &mut coerced) {
                Ok(list) if list.is_empty() && coerced == *data => {}
                other => changed.push(format!("{id}: {other:?}")),
            }
        }
    }
    let unexpected: Vec<&String> = wrong
        .iter()
        .filter(|id| !known.contains(id.as_str()))
        .collect();
    let fixed: Vec<&&str> = known.iter().filter(|id| !wrong.contains(**id)).collect();
    assert!(
        unexpected.is_empty(),
        "{} cases fail that are not listed: {unexpected:#?}",
        unexpected.len()
    );
    assert!(
        fixed.is_empty(),
        "listed as failing but now passing (remove them): {fixed:#?}"
    );
    assert!(
        changed.is_empty(),
        "coercion changed valid instances: {changed:#?}"
    );
    eprintln!(
        "{} cases, {} known failures, every valid instance left unchanged",
        cases.len(),
        KNOWN_FAILURES.len()
    );
}
