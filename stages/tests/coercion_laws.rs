//! The laws of `docs/semantics.md` §3 over generated schemas and instances: a
//! valid instance is never changed, coercing twice equals coercing once,
//! only string leaves change, and coercion never panics.

use agentcore_stages::coerce::coerce;
use agentcore_stages::validate::compile_schema;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const KEYS: &[&str] = &["a", "b", "c", "ab", "1"];
const PATTERNS: &[&str] = &["^a", "b$", "^[0-9]+$", "\\d", "^(a|c)$", "\\w{2}"];
const TYPES: &[&str] = &[
    "null", "boolean", "object", "array", "string", "integer", "number",
];

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(KEYS).prop_map(str::to_owned)
}

fn type_keyword() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        prop::sample::select(TYPES).prop_map(Value::from),
        prop::sample::subsequence(TYPES, 1..=3).prop_map(|ts| json!(ts)),
    ]
}

fn leaf_schema() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => type_keyword().prop_map(|t| json!({ "type": t })),
        1 => Just(json!({})),
        1 => Just(json!(true)),
        1 => Just(json!({"enum": [1, "1", [2]]})),
        1 => prop::sample::select(&["#/$defs/d0", "#/$defs/d1", "#"][..])
            .prop_map(|r| json!({ "$ref": r })),
    ]
}

/// Schemas built from the applicators coercion walks, and `anyOf`.
fn schema() -> impl Strategy<Value = Value> {
    leaf_schema().prop_recursive(4, 48, 4, |inner| {
        let maybe_type = || prop::option::of(type_keyword());
        prop_oneof![
            (
                maybe_type(),
                prop::collection::btree_map(key(), inner.clone(), 0..3),
                prop::collection::btree_map(
                    prop::sample::select(PATTERNS).prop_map(str::to_owned),
                    inner.clone(),
                    0..2
                ),
                prop::option::of(prop_oneof![inner.clone(), Just(json!(false))]),
            )
                .prop_map(|(t, props, patterns, additional)| {
                    let mut s = Map::new();
                    if let Some(t) = t {
                        s.insert("type".into(), t);
                    }
                    if !props.is_empty() {
                        s.insert("properties".into(), json!(props));
                    }
                    if !patterns.is_empty() {
                        s.insert("patternProperties".into(), json!(patterns));
                    }
                    if let Some(a) = additional {
                        s.insert("additionalProperties".into(), a);
                    }
                    Value::Object(s)
                }),
            (
                maybe_type(),
                prop::collection::vec(inner.clone(), 0..3),
                prop::option::of(inner.clone()),
            )
                .prop_map(|(t, prefix, items)| {
                    let mut s = Map::new();
                    if let Some(t) = t {
                        s.insert("type".into(), t);
                    }
                    if !prefix.is_empty() {
                        s.insert("prefixItems".into(), json!(prefix));
                    }
                    if let Some(i) = items {
                        s.insert("items".into(), i);
                    }
                    Value::Object(s)
                }),
            (maybe_type(), prop::collection::vec(inner.clone(), 1..3)).prop_map(|(t, branches)| {
                let mut s = json!({ "allOf": branches });
                if let Some(t) = t {
                    s["type"] = t;
                }
                s
            }),
            inner
                .clone()
                .prop_map(|x| json!({"anyOf": [x, {"type": "null"}]})),
            inner
                .clone()
                .prop_map(|x| json!({"oneOf": [{"type": "null"}, x]})),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| json!({"anyOf": [x, y]})),
            (
                inner.clone(),
                prop::sample::select(&["#/$defs/d0", "#/$defs/d1"][..])
            )
                .prop_map(|(x, r)| {
                    let mut s = json!({ "$ref": r });
                    if let Value::Object(m) = x {
                        for (k, v) in m {
                            if k != "$ref" {
                                s[k] = v;
                            }
                        }
                    }
                    s
                }),
        ]
    })
}

/// A whole document: a root schema with two definitions to `$ref`.
fn document() -> impl Strategy<Value = Value> {
    (schema(), schema(), schema()).prop_map(|(root, d0, d1)| {
        let mut root = match root {
            Value::Object(m) => m,
            Value::Bool(b) => {
                let mut m = Map::new();
                if !b {
                    m.insert("not".into(), json!({}));
                }
                m
            }
            _ => Map::new(),
        };
        root.insert("$defs".into(), json!({"d0": d0, "d1": d1}));
        Value::Object(root)
    })
}

/// Strings models send, many of them JSON text.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(&[
            "1", " 2 ", "-3", "1.5", "1.0", "1e3", "99999999999999999999", "true", "false",
            "null", "\"1\"", "[\"1\", \"2\"]", "[1, \"x\"]", "{\"a\": \"2\"}",
            "{\"b\": \"true\", \"1\": \"[]\"}", "[]", "{}", "x", "", "[[\"3\"]]",
        ][..]).prop_map(str::to_owned),
        1 => any::<String>(),
    ]
}

fn instance() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        4 => text().prop_map(Value::from),
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::from),
        1 => any::<i32>().prop_map(Value::from),
        1 => (-1e6f64..1e6).prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(key(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A small deterministic generator for shaping instances after a schema.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
    fn chance(&mut self) -> bool {
        self.below(2) == 0
    }
}

/// An instance following `schema`'s shape, its leaves often stringified, so
/// that the laws meet coercions and valid instances, not only misses.
fn shaped(schema: &Value, root: &Value, rng: &mut Rng, depth: usize) -> Value {
    if depth > 6 {
        return json!("1");
    }
    let Value::Object(node) = schema else {
        return json!("2");
    };
    if let Some(Value::String(r)) = node.get("$ref")
        && rng.chance()
    {
        let target = match r.as_str() {
            "#" => Some(root),
            r => r.strip_prefix('#').and_then(|p| root.pointer(p)),
        };
        if let Some(target) = target {
            return shaped(target, root, rng, depth + 1);
        }
    }
    for keyword in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = node.get(keyword)
            && !branches.is_empty()
            && rng.below(3) == 0
        {
            let pick = &branches[rng.below(branches.len() as u64) as usize];
            return shaped(pick, root, rng, depth + 1);
        }
    }
    let types: Vec<&str> = match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ if node.contains_key("properties") || node.contains_key("patternProperties") => {
            vec!["object"]
        }
        _ if node.contains_key("items") || node.contains_key("prefixItems") => vec!["array"],
        _ => TYPES.to_vec(),
    };
    let kind = types
        .get(rng.below(types.len() as u64) as usize)
        .copied()
        .unwrap_or("string");
    let value = match kind {
        "object" => {
            let mut map = Map::new();
            if let Some(Value::Object(props)) = node.get("properties") {
                for (k, sub) in props {
                    if rng.below(4) != 0 {
                        map.insert(k.clone(), shaped(sub, root, rng, depth + 1));
                    }
                }
            }
            for k in ["a1", "ab", "1", "zz"] {
                if rng.below(3) == 0 {
                    let sub = node
                        .get("additionalProperties")
                        .or_else(|| {
                            node.get("patternProperties")
                                .and_then(|p| p.as_object()?.values().next())
                        })
                        .unwrap_or(&Value::Bool(true));
                    map.insert(k.to_owned(), shaped(sub, root, rng, depth + 1));
                }
            }
            Value::Object(map)
        }
        "array" => {
            let mut items = Vec::new();
            if let Some(Value::Array(prefix)) = node.get("prefixItems") {
                for sub in prefix {
                    items.push(shaped(sub, root, rng, depth + 1));
                }
            }
            let rest = node.get("items").unwrap_or(&Value::Bool(true));
            for _ in 0..rng.below(3) {
                items.push(shaped(rest, root, rng, depth + 1));
            }
            Value::Array(items)
        }
        "integer" => json!(rng.below(100)),
        "number" => json!(0.5 + rng.below(10) as f64),
        "boolean" => json!(rng.chance()),
        "null" => Value::Null,
        _ => json!(["x", "7", "true", "[]"][rng.below(4) as usize]),
    };
    // Stringify about a third of the values, as weak models do.
    if !value.is_string() && rng.below(3) == 0 {
        let text = value.to_string();
        if rng.chance() {
            Value::String(format!(" {text} "))
        } else {
            Value::String(text)
        }
    } else {
        value
    }
}

/// A schema and an instance: independent, or shaped after the schema.
fn case() -> impl Strategy<Value = (Value, Value)> {
    prop_oneof![
        1 => (document(), instance()),
        2 => (document(), any::<u64>()).prop_map(|(schema, seed)| {
            let value = shaped(&schema, &schema, &mut Rng(seed | 1), 0);
            (schema, value)
        }),
    ]
}

/// Whether `after` differs from `before` only where `before` held a string
/// that `after` replaced with a non-string, non-null value.
fn only_strings_changed(before: &Value, after: &Value) -> bool {
    match (before, after) {
        _ if before == after => true,
        (Value::String(_), Value::String(_) | Value::Null) => false,
        (Value::String(_), _) => true,
        (Value::Array(b), Value::Array(a)) => {
            b.len() == a.len() && b.iter().zip(a).all(|(b, a)| only_strings_changed(b, a))
        }
        (Value::Object(b), Value::Object(a)) => {
            b.len() == a.len()
                && b.iter()
                    .all(|(k, b)| a.get(k).is_some_and(|a| only_strings_changed(b, a)))
        }
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn a_valid_instance_is_never_changed((schema, instance) in case()) {
        if let Ok(validator) = compile_schema(&schema)
            && validator.is_valid(&instance)
        {
            let mut coerced = instance.clone();
            let coercions = coerce(&schema, &mut coerced);
            prop_assert_eq!(coercions.map(|c| c.len()), Ok(0));
            prop_assert_eq!(coerced, instance);
        }
    }

    #[test]
    fn coercing_twice_equals_coercing_once((schema, instance) in case()) {
        let mut once = instance;
        if coerce(&schema, &mut once).is_ok() {
            let mut twice = once.clone();
            prop_assert_eq!(coerce(&schema, &mut twice).map(|c| c.len()), Ok(0));
            prop_assert_eq!(twice, once);
        }
    }

    #[test]
    fn only_string_leaves_change((schema, instance) in case()) {
        let mut coerced = instance.clone();
        if let Ok(coercions) = coerce(&schema, &mut coerced) {
            prop_assert!(only_strings_changed(&instance, &coerced), "{} -> {}", instance, coerced);
            prop_assert_eq!(coercions.is_empty(), instance == coerced);
            for c in &coercions {
                prop_assert!(c.from.starts_with('"'));
                let to: Value = serde_json::from_str(&c.to).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert!(!to.is_string() && !to.is_null());
            }
        }
    }

    #[test]
    fn a_valid_result_is_a_fixed_point(
        (schema, instance) in case(),
    ) {
        // Never panics, whatever the pair; and a valid result stays valid
        // when coerced again (idempotence on valid output).
        let mut coerced = instance;
        let _ = coerce(&schema, &mut coerced);
        if let Ok(validator) = compile_schema(&schema)
            && validator.is_valid(&coerced)
        {
            let mut again = coerced.clone();
            prop_assert_eq!(coerce(&schema, &mut again).map(|c| c.len()), Ok(0));
        }
    }
}

/// The generator reaches the cases the laws are about: some valid
/// instances, and some coercions.
#[test]
fn the_generators_reach_coercions_and_valid_instances() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut valid, mut coerced) = (0, 0);
    for _ in 0..2000 {
        let (schema, mut value) = case().new_tree(&mut runner).expect("tree").current();
        if compile_schema(&schema).is_ok_and(|v| v.is_valid(&value)) {
            valid += 1;
        }
        if coerce(&schema, &mut value).is_ok_and(|c| !c.is_empty()) {
            coerced += 1;
        }
    }
    eprintln!("valid: {valid}, coerced: {coerced}");
    assert!(valid > 50, "valid: {valid}");
    assert!(coerced > 50, "coerced: {coerced}");
}
