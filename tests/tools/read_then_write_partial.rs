//! Issue 13, item 16 (stamps): the ledger records which lines each read
//! showed in full. A read with offset/limit that shows the whole file is a
//! full read; reads of the same content add up; a stamp that is still
//! partial refuses `write` with code 2 and its own text, naming the lines
//! shown, instead of the never-read text that told the model to do what it
//! had just done.

use std::fs;

use agentcore::fs::read_state::Freshness;
use agentcore::{Outcome, ToolResult};
use serde_json::json;

use crate::support::files::{Env, ok};

const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";

fn in_part(lines: &str) -> String {
    format!(
        "File has only been read in part ({lines}). Read all of it before overwriting it, or change it with edit."
    )
}

fn refused(r: &ToolResult, message: &str) {
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert_eq!(r.error_code, Some(2), "{}", r.text());
    assert_eq!(r.text(), message);
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

async fn read(env: &Env, name: &str, offset: Option<u64>, limit: Option<u64>) -> String {
    let mut args = json!({"file_path": name});
    if let Some(o) = offset {
        args["offset"] = json!(o);
    }
    if let Some(l) = limit {
        args["limit"] = json!(l);
    }
    ok(&env.call("read", args).await)
}

fn freshness(env: &Env, name: &str) -> Freshness {
    env.state
        .freshness(&env.path(name).canonicalize().unwrap())
        .unwrap()
}

#[tokio::test]
async fn offset_and_limit_that_show_the_whole_file_make_a_full_read() {
    let env = Env::new();
    env.put("a.txt", numbered(5));
    read(&env, "a.txt", Some(1), Some(100)).await;
    assert_eq!(freshness(&env, "a.txt"), Freshness::Unchanged);
    ok(&env.write("a.txt", "new\n").await);

    env.put("b.txt", numbered(5));
    read(&env, "b.txt", None, Some(5)).await;
    ok(&env.write("b.txt", "new\n").await);

    env.put("c.txt", numbered(5));
    read(&env, "c.txt", Some(1), None).await;
    ok(&env.write("c.txt", "new\n").await);
    assert_eq!(env.bytes("c.txt"), b"new\n");
}

#[tokio::test]
async fn a_file_past_2000_lines_read_in_two_parts_can_be_overwritten() {
    let env = Env::new();
    env.put("long.txt", numbered(2500));
    let first = read(&env, "long.txt", None, None).await;
    assert!(first.ends_with(
        "(File has 2500 lines; showed 1\u{2013}2000. Use offset and limit to read more.)"
    ));
    refused(
        &env.write("long.txt", "x\n").await,
        &in_part("lines 1\u{2013}2000 of 2500"),
    );
    read(&env, "long.txt", Some(2001), None).await;
    assert_eq!(freshness(&env, "long.txt"), Freshness::Unchanged);
    ok(&env.write("long.txt", "x\n").await);
    assert_eq!(env.bytes("long.txt"), b"x\n");
}

#[tokio::test]
async fn disjoint_ranges_are_all_listed_and_overlaps_join() {
    let env = Env::new();
    env.put("f.txt", numbered(40));
    read(&env, "f.txt", Some(21), Some(10)).await;
    read(&env, "f.txt", Some(1), Some(10)).await;
    read(&env, "f.txt", Some(35), Some(2)).await;
    refused(
        &env.write("f.txt", "x\n").await,
        &in_part("lines 1\u{2013}10, 21\u{2013}30, 35\u{2013}36 of 40"),
    );
    // Overlapping and adjacent reads join into one range.
    read(&env, "f.txt", Some(5), Some(20)).await;
    refused(
        &env.write("f.txt", "x\n").await,
        &in_part("lines 1\u{2013}30, 35\u{2013}36 of 40"),
    );
    read(&env, "f.txt", Some(31), Some(4)).await;
    read(&env, "f.txt", Some(37), None).await;
    ok(&env.write("f.txt", "x\n").await);
}

#[tokio::test]
async fn a_line_cut_at_2000_characters_is_not_shown_in_full() {
    let env = Env::new();
    let wide = "w".repeat(2500);
    env.put("wide.txt", format!("short\n{wide}\nend\n"));
    read(&env, "wide.txt", None, None).await;
    refused(
        &env.write("wide.txt", "x\n").await,
        &in_part("lines 1\u{2013}1, 3\u{2013}3 of 3"),
    );
    // Edit still works on what the model can quote.
    ok(&env.edit("wide.txt", "short\n", "long\n").await);

    env.put("one.txt", &wide);
    read(&env, "one.txt", None, None).await;
    refused(
        &env.write("one.txt", "x\n").await,
        &in_part("none of lines 1\u{2013}1"),
    );
}

#[tokio::test]
async fn an_offset_past_the_end_shows_nothing() {
    let env = Env::new();
    env.put("s.txt", numbered(3));
    let text = read(&env, "s.txt", Some(10), None).await;
    assert!(
        text.contains("shorter than the provided offset (10)"),
        "{text}"
    );
    refused(
        &env.write("s.txt", "x\n").await,
        &in_part("none of lines 1\u{2013}3"),
    );
    // A full read before it is not undone by it (same content).
    read(&env, "s.txt", None, None).await;
    read(&env, "s.txt", Some(10), None).await;
    ok(&env.write("s.txt", "x\n").await);
}

#[tokio::test]
async fn reads_of_different_content_do_not_add_up() {
    let env = Env::new();
    env.put("f.txt", "a\nb\nc\nd\n");
    read(&env, "f.txt", Some(1), Some(2)).await;
    // Changed between the reads (same line count): the first read's lines
    // were of other bytes and do not count.
    env.put("f.txt", "A\nb\nc\nd\n");
    read(&env, "f.txt", Some(3), Some(2)).await;
    refused(
        &env.write("f.txt", "x\n").await,
        &in_part("lines 3\u{2013}4 of 4"),
    );
    read(&env, "f.txt", Some(1), Some(2)).await;
    ok(&env.write("f.txt", "x\n").await);
}

#[tokio::test]
async fn never_read_keeps_the_never_read_text() {
    let env = Env::new();
    env.put("a.txt", "old\n");
    refused(&env.write("a.txt", "new\n").await, NOT_READ);
}

/// Through one pipeline with the circuit breaker on (3 failures in a row
/// disable a tool): reading a file with offset/limit and then writing it
/// no longer fails at all, so it can never trip the breaker.
#[tokio::test]
async fn ranged_reads_then_writes_never_trip_the_breaker() {
    use agentcore::{Call, Pipeline};
    use tower::ServiceExt;

    let env = Env::new();
    let pipeline = Pipeline::builder()
        .registry(env.registry())
        .max_tool_errors(3)
        .build();
    for i in 0..5 {
        env.put("a.txt", numbered(10 + i));
        for (id, tool, args) in [
            (
                "r",
                "read",
                json!({"file_path": "a.txt", "offset": 1, "limit": 8}),
            ),
            (
                "r2",
                "read",
                json!({"file_path": "a.txt", "offset": 9, "limit": 100}),
            ),
            (
                "w",
                "write",
                json!({"file_path": "a.txt", "content": format!("v{i}\n")}),
            ),
        ] {
            let r = pipeline
                .service()
                .oneshot(Call::new(id, tool, args))
                .await
                .unwrap();
            assert_eq!(r.outcome, Outcome::Success, "{i} {id}: {}", r.text());
        }
    }
    assert_eq!(fs::read_to_string(env.path("a.txt")).unwrap(), "v4\n");
}
