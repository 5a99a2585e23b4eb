//! JSON-RPC ids read from raw bytes: [`IdScan`] finds the top-level `"id"`
//! of a message seen in pieces (to answer a message too long to read, or
//! to match an answer to its request, without parsing it whole).

use rmcp::model::{NumberOrString, RequestId};
use serde_json::Value;

/// The id `value` is as JSON-RPC writes it: a string, or a number written
/// as an integer (not `0.0`, not `1e2`); `None` for anything else.
pub(crate) fn exact_id(value: &Value) -> Option<RequestId> {
    match value {
        Value::String(text) => Some(NumberOrString::String(text.as_str().into())),
        Value::Number(number) => number.as_i64().map(NumberOrString::Number),
        _ => None,
    }
}

/// The top-level id of the request in `line`, if it names one.
#[cfg_attr(not(feature = "mcp-server"), allow(dead_code))]
pub(crate) fn scanned_id(line: &[u8]) -> Option<RequestId> {
    let mut scan = IdScan::default();
    scan.feed(line);
    scan.take()
}

/// Finds the top-level `"id"` of a JSON object seen in pieces, and whether
/// it has a `"method"`, keeping a few bytes: enough to answer a request too
/// long to read with its own id.
#[derive(Debug, Default)]
pub(crate) struct IdScan {
    /// Seen the first byte that is not whitespace.
    started: bool,
    /// Not an object, or past its end.
    done: bool,
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a key.
    key_next: bool,
    /// Reading a key at depth 1 (at most [`IdScan::KEY`] bytes of it).
    key: Option<Vec<u8>>,
    /// The last key read at depth 1.
    last_key: Vec<u8>,
    /// Reading the value of `"id"` (at most [`IdScan::VALUE`] bytes).
    value: Option<Vec<u8>>,
    /// The raw value of `"id"`, once read whole.
    id: Option<Vec<u8>>,
    has_method: bool,
}

impl IdScan {
    const KEY: usize = 8;
    const VALUE: usize = 256;

    pub(crate) fn feed(&mut self, mut bytes: &[u8]) {
        while let Some((&byte, rest)) = bytes.split_first() {
            if self.done {
                return;
            }
            if self.in_string && !self.escaped && self.key.is_none() && self.value.is_none() {
                // Inside a string nobody keeps (a file's content, say):
                // only a quote or a backslash can change anything.
                let Some(at) = memchr::memchr2(b'"', b'\\', bytes) else {
                    return;
                };
                self.step(bytes[at]);
                bytes = &bytes[at + 1..];
                continue;
            }
            self.step(byte);
            bytes = rest;
        }
    }

    fn step(&mut self, byte: u8) {
        if self.in_string {
            if let Some(key) = self.key.as_mut() {
                if key.len() <= Self::KEY {
                    key.push(byte);
                }
            } else if let Some(value) = self.value.as_mut() {
                value.push(byte);
            }
            if self.escaped {
                self.escaped = false;
            } else if byte == b'\\' {
                self.escaped = true;
            } else if byte == b'"' {
                self.in_string = false;
                if let Some(mut key) = self.key.take() {
                    key.pop();
                    self.last_key = key;
                }
            }
            self.check_value_size();
            return;
        }
        if byte.is_ascii_whitespace() {
            return;
        }
        if !self.started {
            self.started = true;
            if byte == b'{' {
                self.depth = 1;
                self.key_next = true;
            } else {
                self.done = true;
            }
            return;
        }
        match byte {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.key_next {
                    self.key_next = false;
                    self.key = Some(Vec::new());
                } else if let Some(value) = self.value.as_mut() {
                    value.push(byte);
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                // An id is a string or a number, never a structure.
                self.value = None;
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    self.end_value();
                    self.done = true;
                }
            }
            b':' if self.depth == 1 => match self.last_key.as_slice() {
                b"id" => self.value = Some(Vec::new()),
                b"method" => {
                    self.has_method = true;
                    self.check_found();
                }
                _ => {}
            },
            b',' if self.depth == 1 => {
                self.end_value();
                self.key_next = true;
            }
            _ => {
                if let Some(value) = self.value.as_mut() {
                    value.push(byte);
                }
            }
        }
        self.check_value_size();
    }

    fn check_value_size(&mut self) {
        if self.value.as_ref().is_some_and(|v| v.len() > Self::VALUE) {
            self.value = None;
        }
    }

    fn end_value(&mut self) {
        if let Some(value) = self.value.take() {
            self.id = Some(value);
        }
        self.check_found();
    }

    /// Stops once both the id and the method are known.
    fn check_found(&mut self) {
        if self.id.is_some() && self.has_method {
            self.done = true;
        }
    }

    /// The id of the request seen, if it was a request with a usable id;
    /// ready for the next line.
    #[cfg_attr(not(feature = "mcp-server"), allow(dead_code))]
    pub(crate) fn take(&mut self) -> Option<RequestId> {
        let scan = std::mem::take(self);
        if !scan.has_method {
            return None;
        }
        serde_json::from_slice(&scan.id?).ok()
    }

    /// The id of the answer seen (an object with no `"method"`), written
    /// as an id is (a string or an integer); the scan starts over.
    #[cfg_attr(not(feature = "mcp-client"), allow(dead_code))]
    pub(crate) fn take_answered(&mut self) -> Option<RequestId> {
        let scan = std::mem::take(self);
        if scan.has_method {
            return None;
        }
        let value: Value = serde_json::from_slice(&scan.id?).ok()?;
        exact_id(&value)
    }
}
