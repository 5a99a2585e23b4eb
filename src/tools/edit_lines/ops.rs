//! The operations of an `edit_lines` call: as the model writes them
//! ([`Operation`], one flat object whose `op` says which fields it takes)
//! and as checked before the file is looked at ([`LineOp`], in
//! [`Operations`]): each anchor parsed, each operation complete, no
//! operation overlapping another, no text carrying read's anchor prefixes.
//! A call that fails these checks does not deserialize, and the message
//! names the operation (`operation K of N: …`).

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;

use super::anchor::{Anchor, looks_anchored};
use crate::limits::edit_lines::MAX_OPERATIONS;
use crate::tools::schema::builtin_args;

/// What an operation does: `replace` lines `start`–`end` with `text`,
/// `delete` lines `start`–`end`, `insert_after` or `insert_before` the
/// line `anchor` (`insert_after` `0:` at the top of the file). (The
/// variants carry no doc comments, so that the schema is a plain `enum`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
#[non_exhaustive]
pub enum OpKind {
    Replace,
    Delete,
    InsertAfter,
    InsertBefore,
}

impl OpKind {
    fn name(self) -> &'static str {
        match self {
            OpKind::Replace => "replace",
            OpKind::Delete => "delete",
            OpKind::InsertAfter => "insert_after",
            OpKind::InsertBefore => "insert_before",
        }
    }
}

/// One operation of an `edit_lines` call, as the model writes it. The
/// field docs are the descriptions the model reads.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(description = "", transform = builtin_args)]
pub struct Operation {
    /// replace (lines start–end become text), delete (lines start–end), insert_after or insert_before (text beside the line anchor).
    pub op: OpKind,
    /// replace, delete: the first line, as LINE:HASH from read (e.g. "12:a3f").
    pub start: Option<String>,
    /// replace, delete: the last line, as LINE:HASH (default: start).
    pub end: Option<String>,
    /// insert_after, insert_before: the line, as LINE:HASH; "0:" with insert_after inserts at the top of the file.
    pub anchor: Option<String>,
    /// replace, insert_after, insert_before: the new lines, joined with \n, without read's LINE:HASH prefixes.
    pub text: Option<String>,
}

/// An operation checked, by the lines of the file as the model last read
/// it: `start` ≤ `end`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineOp {
    /// Lines `start`–`end` become `text`'s lines.
    Replace {
        /// The first line replaced.
        start: Anchor,
        /// The last line replaced.
        end: Anchor,
        /// The new lines, joined with `\n`.
        text: String,
    },
    /// Lines `start`–`end` are removed.
    Delete {
        /// The first line removed.
        start: Anchor,
        /// The last line removed.
        end: Anchor,
    },
    /// `text`'s lines go after line `anchor` (line 0: at the top).
    InsertAfter {
        /// The line they follow.
        anchor: Anchor,
        /// The new lines, joined with `\n`.
        text: String,
    },
    /// `text`'s lines go before line `anchor`.
    InsertBefore {
        /// The line they precede.
        anchor: Anchor,
        /// The new lines, joined with `\n`.
        text: String,
    },
}

impl LineOp {
    /// The anchors the operation cites, in order.
    pub fn anchors(&self) -> Vec<Anchor> {
        match self {
            LineOp::Replace { start, end, .. } | LineOp::Delete { start, end } if start == end => {
                vec![*start]
            }
            LineOp::Replace { start, end, .. } | LineOp::Delete { start, end } => {
                vec![*start, *end]
            }
            LineOp::InsertAfter { anchor, .. } | LineOp::InsertBefore { anchor, .. } => {
                vec![*anchor]
            }
        }
    }

    /// Where it changes the lines (0-based): remove `remove` lines at
    /// `at`, and put the new ones there.
    pub(crate) fn splice(&self) -> (usize, usize) {
        match self {
            LineOp::Replace { start, end, .. } | LineOp::Delete { start, end } => {
                (start.line - 1, end.line - start.line + 1)
            }
            LineOp::InsertAfter { anchor, .. } => (anchor.line, 0),
            LineOp::InsertBefore { anchor, .. } => (anchor.line - 1, 0),
        }
    }

    /// The new text, if any.
    pub(crate) fn text(&self) -> &str {
        match self {
            LineOp::Replace { text, .. }
            | LineOp::InsertAfter { text, .. }
            | LineOp::InsertBefore { text, .. } => text,
            LineOp::Delete { .. } => "",
        }
    }

    /// How the model would name it: `replace 12:a3f–14:9bc`.
    pub(crate) fn describe(&self) -> String {
        match self {
            LineOp::Replace { start, end, .. } if start == end => format!("replace {start}"),
            LineOp::Replace { start, end, .. } => format!("replace {start}\u{2013}{end}"),
            LineOp::Delete { start, end } if start == end => format!("delete {start}"),
            LineOp::Delete { start, end } => format!("delete {start}\u{2013}{end}"),
            LineOp::InsertAfter { anchor, .. } => format!("insert_after {anchor}"),
            LineOp::InsertBefore { anchor, .. } => format!("insert_before {anchor}"),
        }
    }
}

/// The lines of `text` as new lines of the file: split at `\n` (a `\r\n`
/// counts as `\n`: the file's own line ending is used), one final line
/// ending ignored. Empty text is no line; `"\n"` is one empty line.
pub(crate) fn text_lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect()
}

/// The operations of a call: 1 to [`MAX_OPERATIONS`], each complete, none
/// overlapping another. Only such a list deserializes; the schema bounds
/// its length with `minItems` and `maxItems`.
///
/// ```
/// use agentcore::tools::edit_lines::Operations;
/// use serde_json::json;
///
/// let ops = json!([{"op": "delete", "start": "3:a3f"}]);
/// assert_eq!(serde_json::from_value::<Operations>(ops).unwrap().len(), 1);
/// let overlap = json!([
///     {"op": "delete", "start": "3:a3f", "end": "5:000"},
///     {"op": "replace", "start": "5:000", "text": "x"},
/// ]);
/// let err = serde_json::from_value::<Operations>(overlap).unwrap_err().to_string();
/// assert!(err.contains("overlap"), "{err}");
/// ```
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "Vec<Operation>")]
pub struct Operations(Vec<LineOp>);

impl Operations {
    /// The operations, in the order given.
    pub fn as_slice(&self) -> &[LineOp] {
        &self.0
    }

    /// How many (1 to [`MAX_OPERATIONS`]).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Never true: a call has at least one operation.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Checks `ops` as deserialization does.
    pub fn new(ops: Vec<LineOp>) -> Result<Self, String> {
        check_count(ops.len())?;
        let total = ops.len();
        for (i, op) in ops.iter().enumerate() {
            check_line_op(op).map_err(|why| format!("operation {} of {total}: {why}", i + 1))?;
        }
        check_overlaps(&ops)?;
        Ok(Self(ops))
    }
}

fn check_count(n: usize) -> Result<(), String> {
    if (1..=MAX_OPERATIONS).contains(&n) {
        Ok(())
    } else {
        Err(format!(
            "operations must hold 1 to {MAX_OPERATIONS} operations, not {n}; split a longer change over several calls"
        ))
    }
}

impl TryFrom<Vec<Operation>> for Operations {
    type Error = String;

    fn try_from(ops: Vec<Operation>) -> Result<Self, String> {
        check_count(ops.len())?;
        let total = ops.len();
        let ops = ops
            .into_iter()
            .enumerate()
            .map(|(i, op)| {
                line_op(op).map_err(|why| format!("operation {} of {total}: {why}", i + 1))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(ops)
    }
}

/// One operation as the model wrote it, checked field by field.
fn line_op(op: Operation) -> Result<LineOp, String> {
    let kind = op.op.name();
    let anchor = |field: &str, value: Option<String>| -> Result<Anchor, String> {
        let value = value.ok_or_else(|| format!("{kind} needs `{field}` (LINE:HASH from read)"))?;
        value.parse::<Anchor>()
    };
    let refuse_field = |field: &str, given: bool, why: &str| {
        if given {
            Err(format!("{kind} takes no `{field}`: {why}"))
        } else {
            Ok(())
        }
    };
    match op.op {
        OpKind::Replace | OpKind::Delete => {
            refuse_field(
                "anchor",
                op.anchor.is_some(),
                "give the lines as `start` and `end`",
            )?;
            let start = anchor("start", op.start)?;
            let end = match op.end {
                Some(end) => end.parse::<Anchor>()?,
                None => start,
            };
            if op.op == OpKind::Delete {
                refuse_field(
                    "text",
                    op.text.is_some(),
                    "to put new lines in their place, use replace",
                )?;
                Ok(LineOp::Delete { start, end })
            } else {
                let text = op.text.ok_or_else(|| {
                    "replace needs `text` (an empty text removes the lines, as delete does)"
                        .to_owned()
                })?;
                Ok(LineOp::Replace { start, end, text })
            }
        }
        OpKind::InsertAfter | OpKind::InsertBefore => {
            refuse_field(
                "start",
                op.start.is_some(),
                "give the line to insert beside as `anchor`",
            )?;
            refuse_field(
                "end",
                op.end.is_some(),
                "an insert removes no lines; to replace lines, use replace",
            )?;
            let anchor = anchor("anchor", op.anchor)?;
            let text = op
                .text
                .ok_or_else(|| format!("{kind} needs `text`, the lines to insert"))?;
            Ok(if op.op == OpKind::InsertAfter {
                LineOp::InsertAfter { anchor, text }
            } else {
                LineOp::InsertBefore { anchor, text }
            })
        }
    }
}

/// One checked operation: its anchors in order, line 0 only where it
/// means the top, text that inserts something and is not read's output.
fn check_line_op(op: &LineOp) -> Result<(), String> {
    match op {
        LineOp::Replace { start, end, .. } | LineOp::Delete { start, end } => {
            if start.line == 0 || end.line == 0 {
                return Err(
                    "line 0 is not a line (lines count from 1); \"0:\" only goes with insert_after"
                        .into(),
                );
            }
            if start.hash.is_none() || end.hash.is_none() {
                return Err("an anchor needs its hash (LINE:HASH)".into());
            }
            if end.line < start.line {
                return Err(format!(
                    "end {end} is before start {start}; give the first line as start"
                ));
            }
            if start.line == end.line && start.hash != end.hash {
                return Err(format!(
                    "start {start} and end {end} name the same line with different hashes"
                ));
            }
        }
        LineOp::InsertAfter { anchor, text } | LineOp::InsertBefore { anchor, text } => {
            if matches!(op, LineOp::InsertBefore { .. }) && anchor.line == 0 {
                return Err(
                    "line 0 is not a line; to insert at the top, use insert_after \"0:\" or insert_before the first line"
                        .into(),
                );
            }
            if anchor.line > 0 && anchor.hash.is_none() {
                return Err("an anchor needs its hash (LINE:HASH)".into());
            }
            if text.is_empty() {
                return Err(
                    "the text is empty, so nothing would be inserted; give the lines to insert (\"\\n\" is one empty line)"
                        .into(),
                );
            }
        }
    }
    let text = op.text();
    let mut lines = text_lines(text)
        .into_iter()
        .filter(|l| !l.trim().is_empty());
    if let Some(first) = lines.next()
        && looks_anchored(first)
        && lines.all(looks_anchored)
    {
        return Err(
            "the text holds read's LINE:HASH prefixes (as in \"12:a3f\\t...\"); give the lines as they should be in the file, without them"
                .into(),
        );
    }
    Ok(())
}

/// No two operations touch the same line or put lines at the same place,
/// and no insert is anchored on a line another operation removes.
fn check_overlaps(ops: &[LineOp]) -> Result<(), String> {
    let total = ops.len();
    let mut order: Vec<usize> = (0..total).collect();
    // By place; at one place an insert (removing nothing) first.
    order.sort_by_key(|&i| ops[i].splice());
    let name = |i: usize| format!("operation {} of {total} ({})", i + 1, ops[i].describe());
    for pair in order.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let ((at_a, rm_a), (at_b, rm_b)) = (ops[a].splice(), ops[b].splice());
        let overlaps = at_a + rm_a > at_b || (at_a == at_b && rm_a == 0 && rm_b == 0);
        if overlaps {
            let (first, second) = if a < b { (a, b) } else { (b, a) };
            return Err(format!(
                "{} and {} overlap: operations must change separate lines (all anchors refer to the file as you read it, before this call); merge them into one",
                name(first),
                name(second)
            ));
        }
    }
    // An insert beside a line that another operation removes.
    for (i, op) in ops.iter().enumerate() {
        let anchor = match op {
            LineOp::InsertAfter { anchor, .. } | LineOp::InsertBefore { anchor, .. } => anchor,
            _ => continue,
        };
        if anchor.line == 0 {
            continue;
        }
        for (j, other) in ops.iter().enumerate() {
            let (at, remove) = other.splice();
            if remove > 0 && (at..at + remove).contains(&(anchor.line - 1)) {
                let (first, second) = if i < j { (i, j) } else { (j, i) };
                return Err(format!(
                    "{} and {} overlap: the insert is anchored on a line the other removes; put the inserted lines in the replace's text",
                    name(first),
                    name(second)
                ));
            }
        }
    }
    Ok(())
}

impl JsonSchema for Operations {
    fn schema_name() -> Cow<'static, str> {
        "Operations".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = <Vec<Operation>>::json_schema(generator);
        schema.insert("minItems".to_owned(), 1.into());
        schema.insert("maxItems".to_owned(), MAX_OPERATIONS.into());
        schema
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn parse(ops: Value) -> Result<Operations, String> {
        serde_json::from_value::<Operations>(ops).map_err(|e| e.to_string())
    }

    #[test]
    fn each_kind_takes_its_fields() {
        let ops = parse(json!([
            {"op": "replace", "start": "2:abc", "end": "3:def", "text": "x\ny"},
            {"op": "delete", "start": "5:abc"},
            {"op": "insert_after", "anchor": "0:", "text": "top"},
            {"op": "insert_before", "anchor": "7:abc", "text": "\n"},
        ]))
        .unwrap();
        assert_eq!(ops.len(), 4);
        assert_eq!(ops.as_slice()[1].splice(), (4, 1));
        assert_eq!(ops.as_slice()[0].splice(), (1, 2));
        assert_eq!(ops.as_slice()[2].splice(), (0, 0));
        assert_eq!(ops.as_slice()[3].splice(), (6, 0));
    }

    #[test]
    fn incomplete_or_confused_operations_say_what_to_give() {
        for (ops, says) in [
            (
                json!([{"op": "replace", "start": "2:abc"}]),
                "replace needs `text`",
            ),
            (
                json!([{"op": "replace", "text": "x"}]),
                "replace needs `start`",
            ),
            (
                json!([{"op": "delete", "start": "2:abc", "text": "x"}]),
                "use replace",
            ),
            (
                json!([{"op": "insert_after", "text": "x"}]),
                "needs `anchor`",
            ),
            (
                json!([{"op": "insert_after", "anchor": "2:abc"}]),
                "needs `text`",
            ),
            (
                json!([{"op": "insert_after", "anchor": "2:abc", "text": ""}]),
                "nothing would be inserted",
            ),
            (
                json!([{"op": "insert_before", "anchor": "0:", "text": "x"}]),
                "line 0 is not a line",
            ),
            (
                json!([{"op": "delete", "start": "0:"}]),
                "line 0 is not a line",
            ),
            (
                json!([{"op": "delete", "start": "4:abc", "end": "2:abc"}]),
                "before start",
            ),
            (
                json!([{"op": "delete", "start": "4:abc", "end": "4:abd"}]),
                "same line",
            ),
            (
                json!([{"op": "insert_after", "start": "4:abc", "text": "x"}]),
                "takes no `start`",
            ),
            (
                json!([{"op": "insert_after", "anchor": "4:abc", "end": "5:abc", "text": "x"}]),
                "takes no `end`",
            ),
            (
                json!([{"op": "replace", "anchor": "4:abc", "text": "x"}]),
                "takes no `anchor`",
            ),
            (json!([{"op": "delete", "start": "four"}]), "LINE:HASH"),
            (json!([{"op": "move", "start": "4:abc"}]), "unknown variant"),
            (json!([]), "1 to 100 operations, not 0"),
        ] {
            let err = parse(ops.clone()).unwrap_err();
            assert!(err.contains(says), "{ops}: {err}");
        }
    }

    #[test]
    fn the_operation_is_named() {
        let err = parse(json!([
            {"op": "delete", "start": "1:abc"},
            {"op": "delete", "start": "x"},
        ]))
        .unwrap_err();
        assert!(err.starts_with("operation 2 of 2: anchor \"x\""), "{err}");
    }

    #[test]
    fn overlaps_and_shared_places_are_refused() {
        let overlapping = [
            json!([{"op": "delete", "start": "3:abc"}, {"op": "delete", "start": "3:abc"}]),
            json!([{"op": "delete", "start": "3:abc", "end": "6:abc"}, {"op": "replace", "start": "5:abc", "text": "x"}]),
            json!([{"op": "insert_after", "anchor": "3:abc", "text": "x"}, {"op": "insert_before", "anchor": "4:abc", "text": "y"}]),
            json!([{"op": "insert_after", "anchor": "3:abc", "text": "x"}, {"op": "insert_after", "anchor": "3:abc", "text": "y"}]),
            json!([{"op": "insert_after", "anchor": "4:abc", "text": "x"}, {"op": "delete", "start": "3:abc", "end": "4:abc"}]),
            json!([{"op": "insert_before", "anchor": "3:abc", "text": "x"}, {"op": "delete", "start": "3:abc"}]),
        ];
        for ops in overlapping {
            let err = parse(ops.clone()).unwrap_err();
            assert!(err.contains("overlap"), "{ops}: {err}");
        }
        // Beside a changed range, not on it: separate.
        parse(json!([
            {"op": "insert_after", "anchor": "2:abc", "text": "x"},
            {"op": "delete", "start": "3:abc", "end": "4:abc"},
            {"op": "replace", "start": "5:abc", "text": "z"},
            {"op": "insert_before", "anchor": "6:abc", "text": "y"},
        ]))
        .unwrap();
    }

    #[test]
    fn text_that_is_reads_output_is_refused() {
        let err = parse(json!([{"op": "replace", "start": "3:abc",
            "text": "     3:abc\tfn main() {\n     4:def\t}"}]))
        .unwrap_err();
        assert!(err.contains("LINE:HASH prefixes"), "{err}");
        // One such line among others is text, kept as given.
        parse(json!([{"op": "replace", "start": "3:abc", "text": "12:abc\tx\nplain"}])).unwrap();
    }

    #[test]
    fn text_lines_ignore_one_final_newline() {
        assert!(text_lines("").is_empty());
        assert_eq!(text_lines("\n"), [""]);
        assert_eq!(text_lines("a"), ["a"]);
        assert_eq!(text_lines("a\n"), ["a"]);
        assert_eq!(text_lines("a\r\nb\r\n\r\n"), ["a", "b", ""]);
        assert_eq!(text_lines("a\rb"), ["a\rb"]);
    }

    #[test]
    fn too_many_operations_are_refused() {
        let many: Vec<Value> = (1..=101)
            .map(|i| json!({"op": "delete", "start": format!("{i}:abc")}))
            .collect();
        let err = parse(Value::Array(many.clone())).unwrap_err();
        assert!(err.contains("1 to 100 operations, not 101"), "{err}");
        parse(Value::Array(many[..100].to_vec())).unwrap();
    }
}
