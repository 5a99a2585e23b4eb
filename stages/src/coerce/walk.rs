//! The walk of an instance alongside its schema, coercing as it goes.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use serde_json::{Map, Value};

use super::limits::{MAX_ARGS_BYTES, MAX_DEPTH, check_depth, json_size, nesting};
use super::types::{Types, reading};
use super::{ArgsError, Coercion};
use crate::validate::compile_schema;

/// The dialect coercion walks; a schema declaring another is left alone.
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Compiled `patternProperties` matchers kept at most this many at a time.
const PATTERN_CACHE_LIMIT: usize = 256;

/// Coerces `args` in place to `schema` (`docs/semantics.md` §3) and returns the
/// coercions made, in the order the walk met them.
///
/// A string is replaced only where every `type` that applies to its location
/// excludes `"string"` and the trimmed string is JSON text of a non-null
/// value of an allowed type (for `integer`, an exact integer); coercion then
/// continues inside the new value. Everything else is left as it was, for
/// validation to report.
///
/// Nesting deeper than [`MAX_DEPTH`] or a result larger than
/// [`MAX_ARGS_BYTES`] is an [`ArgsError::TooDeep`] or [`ArgsError::TooLarge`]; `args` may then be
/// partly coerced and should be discarded.
///
/// ```
/// use agentcore_stages::coerce::coerce;
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {"limit": {"type": "integer"}}});
/// let mut args = json!({"limit": " 42 "});
/// let coercions = coerce(&schema, &mut args).unwrap();
/// assert_eq!(args, json!({"limit": 42}));
/// assert_eq!(coercions[0].path, "limit");
/// assert_eq!(coercions[0].from, r#"" 42 ""#);
/// assert_eq!(coercions[0].to, "42");
/// ```
pub fn coerce(schema: &Value, args: &mut Value) -> Result<Vec<Coercion>, ArgsError> {
    check_depth(args, 0)?;
    let mut walk = Walk {
        root: schema,
        path: String::new(),
        coercions: Vec::new(),
    };
    walk.location(&[schema], args, 0)?;
    if !walk.coercions.is_empty() {
        // A number can be longer than the string that spelled it ("1e15").
        let size = json_size(args);
        if size > MAX_ARGS_BYTES {
            return Err(ArgsError::too_large(size));
        }
    }
    Ok(walk.coercions)
}

/// The walk of one instance alongside one schema document.
struct Walk<'s> {
    root: &'s Value,
    /// The current location, written `edits[1].old_string`.
    path: String,
    coercions: Vec<Coercion>,
}

type Schema = Map<String, Value>;

impl<'s> Walk<'s> {
    /// Coerces `instance`, to which the schemas `direct` apply, then what is
    /// inside it.
    fn location(
        &mut self,
        direct: &[&'s Value],
        instance: &mut Value,
        depth: usize,
    ) -> Result<(), ArgsError> {
        if depth > MAX_DEPTH {
            return Err(ArgsError::too_deep());
        }
        // Only a string is read as another type, and only a container has
        // locations below it: anything else is left as it is, whatever the
        // schemas say, so they need not be gathered.
        let may_change = match &*instance {
            Value::String(_) => true,
            Value::Object(map) => !map.is_empty(),
            Value::Array(items) => !items.is_empty(),
            _ => false,
        };
        if !may_change {
            return Ok(());
        }
        let nodes = self.applicable(direct);
        if nodes.is_empty() {
            return Ok(());
        }
        if let Value::String(text) = instance
            && let Some(allowed) = allowed_types(&nodes)
            && !allowed.contains(Types::STRING)
            && let Some(value) = reading(text, allowed)
        {
            if depth + nesting(&value) > MAX_DEPTH {
                return Err(ArgsError::too_deep());
            }
            self.coercions.push(Coercion {
                path: self.path.clone(),
                from: Value::String(std::mem::take(text)).to_string(),
                to: value.to_string(),
            });
            *instance = value;
        }
        match instance {
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    let schemas = property_schemas(&nodes, key);
                    if schemas.is_empty() {
                        continue;
                    }
                    let len = self.path.len();
                    if !self.path.is_empty() {
                        self.path.push('.');
                    }
                    self.path.push_str(key);
                    let walked = self.location(&schemas, child, depth + 1);
                    self.path.truncate(len);
                    walked?;
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter_mut().enumerate() {
                    let schemas = item_schemas(&nodes, index);
                    if schemas.is_empty() {
                        continue;
                    }
                    let len = self.path.len();
                    self.path.push_str(&format!("[{index}]"));
                    let walked = self.location(&schemas, item, depth + 1);
                    self.path.truncate(len);
                    walked?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Every schema object that applies at a location reached through
    /// `direct`: those, plus what their local `$ref`s, `allOf` branches and
    /// "X or null" `anyOf` / `oneOf` lead to. Nodes coercion does not walk
    /// into are left out; each node is taken once, which stops `$ref` cycles.
    fn applicable(&self, direct: &[&'s Value]) -> Vec<&'s Schema> {
        let mut seen: Vec<*const Value> = Vec::new();
        let mut nodes = Vec::new();
        let mut pending: Vec<&'s Value> = direct.iter().rev().copied().collect();
        while let Some(node) = pending.pop() {
            if seen.iter().any(|&s| std::ptr::eq(s, node)) {
                continue;
            }
            seen.push(node);
            // `true` and `false` constrain no location below them.
            let Value::Object(schema) = node else {
                continue;
            };
            if !walkable(schema) {
                continue;
            }
            let target = match schema.get("$ref") {
                None => None,
                Some(Value::String(reference)) => match self.resolve(reference) {
                    Some(target) => Some(target),
                    None => continue,
                },
                Some(_) => continue,
            };
            nodes.push(schema);
            let mut next: Vec<&'s Value> = Vec::new();
            next.extend(target);
            if let Some(Value::Array(branches)) = schema.get("allOf") {
                next.extend(branches);
            }
            for keyword in ["anyOf", "oneOf"] {
                next.extend(schema.get(keyword).and_then(non_null_branch));
            }
            pending.extend(next.into_iter().rev());
        }
        nodes
    }

    /// The node a local `$ref` names: `#` or a JSON pointer fragment. `None`
    /// for anything else, or a pointer through another resource (`$id`).
    fn resolve(&self, reference: &str) -> Option<&'s Value> {
        let fragment = percent_decode(reference.strip_prefix('#')?)?;
        if fragment.is_empty() {
            return Some(self.root);
        }
        let pointer = fragment.strip_prefix('/')?;
        let mut node = self.root;
        for token in pointer.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            node = match node {
                Value::Object(map) => map.get(&token)?,
                Value::Array(items)
                    if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    items.get(token.parse::<usize>().ok()?)?
                }
                _ => return None,
            };
            if node.get("$id").is_some() {
                return None;
            }
        }
        Some(node)
    }
}

/// Whether coercion walks into `schema` (`docs/semantics.md` §3).
fn walkable(schema: &Schema) -> bool {
    let dialect_ok = match schema.get("$schema") {
        None => true,
        Some(Value::String(uri)) => uri.trim_end_matches('#') == DRAFT_2020_12,
        Some(_) => false,
    };
    dialect_ok && !schema.contains_key("$id") && !schema.contains_key("$dynamicRef")
}

/// The intersection of every `type` among `nodes`; `None` if none has one.
fn allowed_types(nodes: &[&Schema]) -> Option<Types> {
    nodes
        .iter()
        .filter_map(|schema| schema.get("type"))
        .map(Types::of_keyword)
        .reduce(Types::intersect)
}

/// In `[X, {"type": "null"}]` (either order), `X`.
fn non_null_branch(branches: &Value) -> Option<&Value> {
    let [a, b] = branches.as_array()?.as_slice() else {
        return None;
    };
    let is_null = |v: &Value| {
        v.as_object()
            .is_some_and(|m| m.len() == 1 && m.get("type") == Some(&Value::from("null")))
    };
    if is_null(b) {
        Some(a)
    } else if is_null(a) {
        Some(b)
    } else {
        None
    }
}

/// The subschemas that apply to the member `key` of an object.
fn property_schemas<'s>(nodes: &[&'s Schema], key: &str) -> Vec<&'s Value> {
    let mut schemas = Vec::new();
    for schema in nodes {
        let mut matched = false;
        if let Some(Value::Object(properties)) = schema.get("properties")
            && let Some(sub) = properties.get(key)
        {
            schemas.push(sub);
            matched = true;
        }
        if let Some(Value::Object(patterns)) = schema.get("patternProperties") {
            for (pattern, sub) in patterns {
                if pattern_matches(pattern, key) {
                    schemas.push(sub);
                    matched = true;
                }
            }
        }
        if !matched && let Some(sub) = schema.get("additionalProperties") {
            schemas.push(sub);
        }
    }
    schemas
}

/// The subschemas that apply to item `index` of an array.
fn item_schemas<'s>(nodes: &[&'s Schema], index: usize) -> Vec<&'s Value> {
    let mut schemas = Vec::new();
    for schema in nodes {
        let prefix = match schema.get("prefixItems") {
            Some(Value::Array(prefix)) => prefix.as_slice(),
            _ => &[],
        };
        if let Some(sub) = prefix.get(index) {
            schemas.push(sub);
        } else if let Some(sub @ (Value::Object(_) | Value::Bool(_))) = schema.get("items") {
            schemas.push(sub);
        }
    }
    schemas
}

/// Whether `key` matches the `patternProperties` regex `pattern`, decided by
/// the schema validator itself so that the ECMA-262 semantics are its own.
fn pattern_matches(pattern: &str, key: &str) -> bool {
    type Cache = HashMap<String, Option<Arc<jsonschema::Validator>>>;
    static MATCHERS: LazyLock<Mutex<Cache>> = LazyLock::new(Default::default);
    let matcher = {
        let mut cache = MATCHERS.lock().unwrap_or_else(PoisonError::into_inner);
        match cache.get(pattern) {
            Some(matcher) => matcher.clone(),
            None => {
                if cache.len() >= PATTERN_CACHE_LIMIT {
                    cache.clear();
                }
                let mut patterns = Map::new();
                patterns.insert(pattern.to_owned(), Value::Bool(false));
                let mut schema = Map::new();
                schema.insert("patternProperties".to_owned(), Value::Object(patterns));
                let matcher = compile_schema(&Value::Object(schema)).ok().map(Arc::new);
                cache.insert(pattern.to_owned(), matcher.clone());
                matcher
            }
        }
    };
    matcher.is_some_and(|matcher| {
        let mut probe = Map::new();
        probe.insert(key.to_owned(), Value::Null);
        !matcher.is_valid(&Value::Object(probe))
    })
}

/// `%XX` escapes of a URI fragment decoded; `None` if not UTF-8 after.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: &u8| (*b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(high), Some(low)) = (
                bytes.get(i + 1).and_then(hex),
                bytes.get(i + 2).and_then(hex),
            )
        {
            // Two hex digits make one byte: at most 255.
            out.push((high * 16 + low) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::coerce::limits::json_size;

    fn coerced(schema: Value, args: Value) -> (Value, Vec<(String, String, String)>) {
        let mut args = args;
        let coercions = coerce(&schema, &mut args).expect("coerces");
        let listed = coercions
            .into_iter()
            .map(|c| (c.path, c.from, c.to))
            .collect();
        (args, listed)
    }

    fn object(properties: Value) -> Value {
        json!({"type": "object", "properties": properties})
    }

    #[test]
    fn integer_from_padded_string() {
        let (args, list) = coerced(
            object(json!({"n": {"type": "integer"}})),
            json!({"n": " 42 "}),
        );
        assert_eq!(args, json!({"n": 42}));
        assert_eq!(list, [("n".into(), "\" 42 \"".into(), "42".into())]);
    }

    #[test]
    fn inexact_integers_stay_strings() {
        for text in [
            "1.5",
            "1.0",
            "1e3",
            "99999999999999999999",
            "null",
            "\"3\"",
            "x",
        ] {
            let (args, list) = coerced(
                object(json!({"n": {"type": "integer"}})),
                json!({"n": text}),
            );
            assert_eq!(args, json!({"n": text}), "{text}");
            assert!(list.is_empty());
        }
    }

    #[test]
    fn number_accepts_any_number() {
        let (args, _) = coerced(
            object(json!({"n": {"type": "number"}})),
            json!({"n": "1e3"}),
        );
        assert_eq!(args, json!({"n": 1000.0}));
    }

    #[test]
    fn allowed_types_are_intersected() {
        // number ∩ integer = integer: "1.5" is left.
        let schema = json!({"allOf": [{"type": "number"}, {"type": ["integer", "string"]}]});
        let (args, _) = coerced(schema.clone(), json!("1.5"));
        assert_eq!(args, json!("1.5"));
        let schema = json!({"type": "number", "allOf": [{"type": ["integer", "boolean"]}]});
        let (args, _) = coerced(schema, json!("7"));
        assert_eq!(args, json!(7));
    }

    #[test]
    fn string_allowed_anywhere_means_left() {
        let (args, list) = coerced(
            object(json!({"n": {"type": ["integer", "string"]}})),
            json!({"n": "3"}),
        );
        assert_eq!(args, json!({"n": "3"}));
        assert!(list.is_empty());
    }

    #[test]
    fn no_type_means_left() {
        let (args, _) = coerced(object(json!({"n": {"enum": [1, 2]}})), json!({"n": "1"}));
        assert_eq!(args, json!({"n": "1"}));
    }

    #[test]
    fn coercion_continues_inside_the_new_value() {
        let schema = object(json!({
            "edits": {"type": "array", "items": {
                "type": "object",
                "properties": {"line": {"type": "integer"}}
            }}
        }));
        let (args, list) = coerced(schema, json!({"edits": "[{\"line\": \"3\"}]"}));
        assert_eq!(args, json!({"edits": [{"line": 3}]}));
        assert_eq!(list[0].0, "edits");
        assert_eq!(
            list[1],
            ("edits[0].line".into(), "\"3\"".into(), "3".into())
        );
    }

    #[test]
    fn pattern_and_additional_properties() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "patternProperties": {"^n_\\d+$": {"type": "integer"}},
            "additionalProperties": {"type": "boolean"}
        });
        let (args, _) = coerced(
            schema,
            json!({"a": "1", "n_1": "2", "n_x": "true", "b": "false"}),
        );
        assert_eq!(args, json!({"a": "1", "n_1": 2, "n_x": true, "b": false}));
    }

    #[test]
    fn pattern_uses_ecma_semantics() {
        // \d is ASCII-only in ECMA-262 (and in the validator), so "n_٣" is not
        // matched and falls to additionalProperties.
        let schema = json!({
            "patternProperties": {"^n_\\d$": {"type": "integer"}},
            "additionalProperties": {"type": "boolean"}
        });
        let (args, _) = coerced(schema, json!({"n_\u{663}": "true", "n_3": "3"}));
        assert_eq!(args, json!({"n_\u{663}": true, "n_3": 3}));
    }

    #[test]
    fn prefix_items_then_items() {
        let schema = json!({
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "boolean"}],
            "items": {"type": "integer"}
        });
        let (args, list) = coerced(schema, json!(["1", "true", "2", "x"]));
        assert_eq!(args, json!(["1", true, 2, "x"]));
        assert_eq!(list[0].0, "[1]");
        assert_eq!(list[1].0, "[2]");
    }

    #[test]
    fn refs_and_cycles() {
        let schema = json!({
            "$defs": {
                "node": {"type": "object", "properties": {
                    "value": {"type": "integer"},
                    "next": {"$ref": "#/$defs/node"}
                }},
                "loop": {"$ref": "#/$defs/loop"}
            },
            "type": "object",
            "properties": {"head": {"$ref": "#/$defs/node"}, "l": {"$ref": "#/$defs/loop"}}
        });
        let (args, list) = coerced(
            schema,
            json!({"head": {"value": "1", "next": {"value": "2"}}, "l": "3"}),
        );
        assert_eq!(
            args,
            json!({"head": {"value": 1, "next": {"value": 2}}, "l": "3"})
        );
        // Members in key order: "next" before "value".
        assert_eq!(list[0].0, "head.next.value");
        assert_eq!(list[1].0, "head.value");
    }

    #[test]
    fn root_ref_and_escaped_pointers() {
        let schema = json!({
            "type": ["object", "integer"],
            "properties": {"self": {"$ref": "#"}, "x": {"$ref": "#/$defs/a~1b%25"}},
            "$defs": {"a/b%": {"type": "boolean"}}
        });
        let (args, _) = coerced(schema, json!({"self": "5", "x": "true"}));
        assert_eq!(args, json!({"self": 5, "x": true}));
    }

    #[test]
    fn option_shape_is_walked_as_its_value() {
        let schema = json!({
            "type": "object",
            "properties": {"opt": {"anyOf": [{"$ref": "#/$defs/S"}, {"type": "null"}]}},
            "$defs": {"S": {"type": "object", "properties": {"n": {"type": "integer"}}}}
        });
        let (args, _) = coerced(schema, json!({"opt": "{\"n\": \"4\"}"}));
        assert_eq!(args, json!({"opt": {"n": 4}}));
        let (args, _) = coerced(
            object(json!({"o": {"oneOf": [{"type": "null"}, {"type": "integer"}]}})),
            json!({"o": "4"}),
        );
        assert_eq!(args, json!({"o": 4}));
    }

    #[test]
    fn other_applicators_are_not_walked() {
        for schema in [
            json!({"anyOf": [{"type": "integer"}, {"type": "boolean"}]}),
            json!({"oneOf": [{"type": "integer"}, {"type": "null"}, {"type": "boolean"}]}),
            json!({"anyOf": [{"type": "integer"}, {"type": "null", "title": "x"}]}),
            json!({"not": {"type": "string"}}),
            json!({"if": true, "then": {"type": "integer"}}),
            json!({"$id": "http://x/y", "type": "integer"}),
            json!({"$dynamicRef": "#meta", "type": "integer"}),
            json!({"$ref": "http://x/y", "type": "integer"}),
            json!({"$ref": "#anchor", "type": "integer"}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "integer"}),
        ] {
            let (args, list) = coerced(schema.clone(), json!("1"));
            assert_eq!(args, json!("1"), "{schema}");
            assert!(list.is_empty());
        }
        let schema =
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "integer"});
        assert_eq!(coerced(schema, json!("1")).0, json!(1));
    }

    #[test]
    fn depth_past_the_limit_is_an_error() {
        // The string sits at depth 31 and parses into 100 more levels.
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        let mut inner = json!([deep]);
        for _ in 0..29 {
            inner = json!([inner]);
        }
        let mut args = json!({"a": inner});
        let schema = json!({
            "properties": {"a": {"$ref": "#/$defs/t"}},
            "$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}
        });
        let err = coerce(&schema, &mut args).unwrap_err();
        assert!(matches!(err, ArgsError::TooDeep { limit: 128 }));
        assert!(err.to_string().contains("deeper than 128"));
        // 90 more levels fit.
        let fits = format!("{}{}", "[".repeat(90), "]".repeat(90));
        let mut inner = json!([fits]);
        for _ in 0..29 {
            inner = json!([inner]);
        }
        let mut args = json!({"a": inner});
        assert_eq!(coerce(&schema, &mut args).map(|c| c.len()), Ok(1));
    }

    #[test]
    fn too_deep_input_is_an_error() {
        let mut v = json!(1);
        for _ in 0..=MAX_DEPTH {
            v = json!([v]);
        }
        assert!(coerce(&json!({}), &mut v).is_err());
    }

    #[test]
    fn growth_past_the_size_limit_is_an_error() {
        // Each "1e15," (5 bytes) becomes 1000000000000000.0 (19 bytes with
        // its comma): 2 MiB of text grows past 4 MiB once coerced.
        let count = 2 * 1024 * 1024 / 5;
        let text = format!("[{}1e15]", "1e15,".repeat(count - 1));
        let mut args = json!({ "a": text });
        assert!(json_size(&args) <= MAX_ARGS_BYTES);
        let schema = object(json!({"a": {"type": "array"}}));
        let err = coerce(&schema, &mut args).unwrap_err();
        assert!(matches!(err, ArgsError::TooLarge { .. }));
        assert!(err.to_string().contains("more than the limit"));
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("/a%20b").as_deref(), Some("/a b"));
        assert_eq!(percent_decode("%").as_deref(), Some("%"));
        assert_eq!(percent_decode("%4").as_deref(), Some("%4"));
        assert_eq!(percent_decode("%ff"), None);
    }
}
