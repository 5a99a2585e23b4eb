//! Arbitrary schema and instance through `coerce`: it never panics, leaves
//! a valid instance unchanged, and coercing twice equals coercing once.

#![no_main]

use agentcore_stages::coerce::coerce;
use agentcore_stages::validate::compile_schema;
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Type {
    Null,
    Boolean,
    Object,
    Array,
    String,
    Integer,
    Number,
}

impl Type {
    fn name(self) -> &'static str {
        match self {
            Type::Null => "null",
            Type::Boolean => "boolean",
            Type::Object => "object",
            Type::Array => "array",
            Type::String => "string",
            Type::Integer => "integer",
            Type::Number => "number",
        }
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Key {
    A,
    B,
    Ab,
    One,
    Edits,
}

impl Key {
    fn name(self) -> &'static str {
        match self {
            Key::A => "a",
            Key::B => "b",
            Key::Ab => "ab",
            Key::One => "1",
            Key::Edits => "edits",
        }
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Pattern {
    StartsA,
    EndsB,
    Digits,
    Word2,
    Unicode,
}

impl Pattern {
    fn text(self) -> &'static str {
        match self {
            Pattern::StartsA => "^a",
            Pattern::EndsB => "b$",
            Pattern::Digits => "^\\d+$",
            Pattern::Word2 => "\\w{2}",
            Pattern::Unicode => "^\\p{L}$",
        }
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Ref {
    D0,
    D1,
    Root,
    Remote,
    Anchor,
}

/// The keywords coercion knows, and some it must leave alone.
#[derive(Arbitrary, Debug)]
enum Schema {
    True,
    False,
    Empty,
    Type(Vec<Type>),
    Enum(Vec<Instance>),
    Object {
        ty: Option<Type>,
        properties: Vec<(Key, Schema)>,
        patterns: Vec<(Pattern, Schema)>,
        additional: Option<Box<Schema>>,
        required: Vec<Key>,
    },
    Array {
        ty: Option<Type>,
        prefix: Vec<Schema>,
        items: Option<Box<Schema>>,
    },
    AllOf(Vec<Schema>),
    AnyOf(Vec<Schema>),
    OneOf(Vec<Schema>),
    Nullable(Box<Schema>),
    Not(Box<Schema>),
    Ref(Ref, Option<Type>),
    Id(Box<Schema>),
    DynamicRef(Box<Schema>),
}

fn schemas(list: &[Schema]) -> Value {
    Value::Array(list.iter().map(Schema::to_json).collect())
}

impl Schema {
    fn to_json(&self) -> Value {
        match self {
            Schema::True => json!(true),
            Schema::False => json!(false),
            Schema::Empty => json!({}),
            Schema::Type(types) => match types.as_slice() {
                [one] => json!({"type": one.name()}),
                many => json!({"type": many.iter().map(|t| t.name()).collect::<Vec<_>>()}),
            },
            Schema::Enum(values) => {
                json!({"enum": values.iter().map(Instance::to_json).collect::<Vec<_>>()})
            }
            Schema::Object {
                ty,
                properties,
                patterns,
                additional,
                required,
            } => {
                let mut s = Map::new();
                if let Some(t) = ty {
                    s.insert("type".into(), t.name().into());
                }
                let props: Map<String, Value> = properties
                    .iter()
                    .map(|(k, v)| (k.name().to_owned(), v.to_json()))
                    .collect();
                s.insert("properties".into(), Value::Object(props));
                let pats: Map<String, Value> = patterns
                    .iter()
                    .map(|(p, v)| (p.text().to_owned(), v.to_json()))
                    .collect();
                s.insert("patternProperties".into(), Value::Object(pats));
                if let Some(a) = additional {
                    s.insert("additionalProperties".into(), a.to_json());
                }
                let mut req: Vec<&str> = required.iter().map(|k| k.name()).collect();
                req.sort_unstable();
                req.dedup();
                s.insert("required".into(), json!(req));
                Value::Object(s)
            }
            Schema::Array { ty, prefix, items } => {
                let mut s = Map::new();
                if let Some(t) = ty {
                    s.insert("type".into(), t.name().into());
                }
                s.insert("prefixItems".into(), schemas(prefix));
                if let Some(i) = items {
                    s.insert("items".into(), i.to_json());
                }
                Value::Object(s)
            }
            Schema::AllOf(list) => json!({"allOf": schemas(list)}),
            Schema::AnyOf(list) => json!({"anyOf": schemas(list)}),
            Schema::OneOf(list) => json!({"oneOf": schemas(list)}),
            Schema::Nullable(inner) => json!({"anyOf": [inner.to_json(), {"type": "null"}]}),
            Schema::Not(inner) => json!({"not": inner.to_json()}),
            Schema::Ref(r, ty) => {
                let target = match r {
                    Ref::D0 => "#/$defs/d0",
                    Ref::D1 => "#/$defs/d1",
                    Ref::Root => "#",
                    Ref::Remote => "http://localhost:1234/x.json",
                    Ref::Anchor => "#anchor",
                };
                let mut s = json!({"$ref": target});
                if let Some(t) = ty {
                    s["type"] = t.name().into();
                }
                s
            }
            Schema::Id(inner) => {
                let mut s = inner.to_json();
                if let Value::Object(m) = &mut s {
                    m.insert("$id".into(), "http://example.com/inner".into());
                }
                s
            }
            Schema::DynamicRef(inner) => {
                let mut s = inner.to_json();
                if let Value::Object(m) = &mut s {
                    m.insert("$dynamicRef".into(), "#meta".into());
                }
                s
            }
        }
    }
}

/// Strings are often JSON text, as models send them.
#[derive(Arbitrary, Debug)]
enum Text {
    Int(i64),
    Padded(i32),
    Float(f64),
    Bool(bool),
    Null,
    Json(Box<Instance>),
    Raw(String),
}

#[derive(Arbitrary, Debug)]
enum Instance {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Text),
    Array(Vec<Instance>),
    Object(Vec<(Key, Instance)>),
}

/// Bounds on what one input may build, so that every input is cheap to run
/// and within what `parse_args` accepts. Without them `Text::Json`, which
/// nests JSON text inside JSON text, doubles its backslashes at every level
/// and a 4 KB input grows into gigabytes before `coerce` is reached.
struct Budget {
    /// Bytes of string content still allowed in the whole instance.
    bytes: usize,
}

/// Total string bytes one instance may hold (far below `MAX_ARGS_BYTES`).
const MAX_INSTANCE_BYTES: usize = 64 * 1024;
/// Levels of arrays and objects, counted across embedded JSON text too,
/// kept below `MAX_DEPTH` (128).
const MAX_INSTANCE_DEPTH: usize = 64;
/// Levels of JSON text embedded in strings.
const MAX_TEXT_NESTING: usize = 4;

impl Instance {
    fn to_json(&self) -> Value {
        self.bounded(
            &mut Budget {
                bytes: MAX_INSTANCE_BYTES,
            },
            0,
            0,
        )
    }

    /// The instance as JSON, leaving out (as `null`) whatever would exceed
    /// the budget, the depth or the text nesting.
    fn bounded(&self, budget: &mut Budget, depth: usize, nesting: usize) -> Value {
        if depth >= MAX_INSTANCE_DEPTH {
            return Value::Null;
        }
        match self {
            Instance::Null => Value::Null,
            Instance::Bool(b) => json!(b),
            Instance::Int(i) => json!(i),
            Instance::Float(f) => json!(f),
            Instance::Str(text) => {
                let s = match text {
                    Text::Int(i) => i.to_string(),
                    Text::Padded(i) => format!(" {i}\n"),
                    Text::Float(f) => f.to_string(),
                    Text::Bool(b) => b.to_string(),
                    Text::Null => "null".into(),
                    Text::Json(_) if nesting >= MAX_TEXT_NESTING => return Value::Null,
                    Text::Json(inner) => inner.bounded(budget, depth + 1, nesting + 1).to_string(),
                    Text::Raw(s) => s.clone(),
                };
                match budget.bytes.checked_sub(s.len()) {
                    Some(left) => {
                        budget.bytes = left;
                        Value::String(s)
                    }
                    None => Value::Null,
                }
            }
            Instance::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| item.bounded(budget, depth + 1, nesting))
                    .collect(),
            ),
            Instance::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.name().to_owned(), v.bounded(budget, depth + 1, nesting)))
                    .collect(),
            ),
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    root: Schema,
    d0: Schema,
    d1: Schema,
    instance: Instance,
}

fuzz_target!(|input: Input| {
    let mut schema = input.root.to_json();
    if let Value::Object(m) = &mut schema {
        m.insert(
            "$defs".into(),
            json!({"d0": input.d0.to_json(), "d1": input.d1.to_json()}),
        );
    }
    let instance = input.instance.to_json();

    let mut once = instance.clone();
    let Ok(coercions) = coerce(&schema, &mut once) else {
        return;
    };
    assert_eq!(coercions.is_empty(), once == instance);

    let mut twice = once.clone();
    let again = coerce(&schema, &mut twice).expect("a coerced instance coerces again");
    assert!(
        again.is_empty(),
        "coercing twice differs from once: {again:?}"
    );
    assert_eq!(twice, once);

    if let Ok(validator) = compile_schema(&schema)
        && validator.is_valid(&instance)
    {
        assert!(
            coercions.is_empty(),
            "a valid instance changed: {coercions:?}"
        );
    }
});
