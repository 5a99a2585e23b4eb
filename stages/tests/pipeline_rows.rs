//! One behaviour test per row of the pipeline table (docs/semantics.md §2):
//! the outcome, the exact message and the breaker's reaction.

mod common;

use std::sync::atomic::Ordering;

use agentcore_stages::{
    Call, CancelReason, Cancellation, Event, Outcome, Pipeline, UpdateKind,
    gate::{GateDecision, gate_fn},
};
use common::*;
use serde_json::json;

#[tokio::test]
async fn start_carries_args_as_received_and_label_from_registry() {
    let (p, mut rx) = pipeline(vec![
        ScriptTool::new("t", Behavior::Echo).label("Test Tool"),
    ]);
    let svc = p.service();
    run(&svc, Call::new("c1", "t", r#"{"a": 1}"#)).await;
    run(&svc, Call::new("c2", "nope", json!({"b": 2}))).await;
    let events = drain(&mut rx);
    assert_eq!(
        events[0],
        Event::ToolExecStart {
            call_id: "c1".into(),
            tool: "t".into(),
            label: Some("Test Tool".into()),
            args: json!(r#"{"a": 1}"#),
        }
    );
    let Event::ToolExecStart { label, args, .. } = &events[2] else {
        panic!("expected Start, got {:?}", events[2]);
    };
    assert_eq!(label, &None, "an unknown tool has a null label");
    assert_eq!(args, &json!({"b": 2}));
}

#[tokio::test]
async fn json_text_args_reach_the_tool_parsed() {
    let (p, _rx) = pipeline(vec![ScriptTool::new("t", Behavior::Echo)]);
    let r = run(&p.service(), Call::new("c1", "t", r#"{"x": [1, 2]}"#)).await;
    assert_eq!(r.outcome, Outcome::Success);
    assert_eq!(r.text(), r#"{"x":[1,2]}"#);
}

#[tokio::test]
async fn aborted_call_ends_cancelled_before_running() {
    let tool = ScriptTool::new("t", Behavior::Succeed("ran"));
    let runs = tool.executions();
    let (p, _rx) = pipeline(vec![tool]);
    let c = Cancellation::new();
    c.cancel(CancelReason::Abort);
    let r = run(&p.service(), Call::new("c1", "t", "").with_cancellation(c)).await;
    assert_eq!(r.outcome, Outcome::Cancelled);
    assert_eq!(r.text(), "Tool execution cancelled.");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(p.breaker().count("t"), 0);
}

#[tokio::test]
async fn skipped_call_ends_skipped_with_the_steering_message() {
    let (p, mut rx) = pipeline(vec![ScriptTool::new("t", Behavior::Succeed("ran"))]);
    let parent = Cancellation::new();
    let child = parent.child();
    parent.cancel(CancelReason::Skip);
    let r = run(
        &p.service(),
        Call::new("c1", "t", "").with_cancellation(child),
    )
    .await;
    assert_eq!(r.outcome, Outcome::Skipped);
    assert_eq!(r.text(), "Skipped due to queued user message.");
    assert_paired(&drain(&mut rx));
}

#[tokio::test]
async fn breaker_disables_after_max_consecutive_failures() {
    let (p, _rx) = pipeline(vec![ScriptTool::new("t", Behavior::Fail("boom"))]);
    let svc = p.service();
    for i in 0..3 {
        let r = run(&svc, Call::new(format!("c{i}"), "t", "")).await;
        assert_eq!(r.outcome, Outcome::Failed);
        assert_eq!(r.text(), "boom");
    }
    let r = run(&svc, Call::new("c4", "t", "")).await;
    assert_eq!(r.outcome, Outcome::Disabled);
    assert_eq!(r.text(), r#"tool "t" disabled after 3 consecutive errors"#);
    assert_eq!(
        p.breaker().count("t"),
        3,
        "a Disabled outcome is not counted"
    );
}

#[tokio::test]
async fn unknown_tool_fails_and_counts() {
    let (p, _rx) = pipeline(vec![]);
    let r = run(&p.service(), Call::new("c1", "ghost", "")).await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.text(), r#"tool "ghost" not found"#);
    assert_eq!(r.label, None);
    assert_eq!(p.breaker().count("ghost"), 1);
}

#[tokio::test]
async fn malformed_json_args_fail_with_the_parser_error() {
    let (p, _rx) = pipeline(vec![ScriptTool::new("t", Behavior::Echo)]);
    let r = run(&p.service(), Call::new("c1", "t", "{nope")).await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert!(
        r.text()
            .starts_with("tool argument validation failed: t received malformed JSON arguments: "),
        "{}",
        r.text()
    );
    assert_eq!(p.breaker().count("t"), 1);
}

#[tokio::test]
async fn non_object_args_fail_naming_the_type() {
    let (p, _rx) = pipeline(vec![ScriptTool::new("t", Behavior::Echo)]);
    let svc = p.service();
    let r = run(&svc, Call::new("c1", "t", "[1]")).await;
    assert_eq!(
        r.text(),
        "tool argument validation failed: t expects a JSON object but received array"
    );
    let r = run(&svc, Call::new("c2", "t", json!("x"))).await;
    assert_eq!(
        r.text(),
        "tool argument validation failed: t expects a JSON object but received string"
    );
    assert_eq!(r.outcome, Outcome::Failed);
}

#[tokio::test]
async fn empty_string_args_mean_an_empty_object() {
    let (p, _rx) = pipeline(vec![ScriptTool::new("t", Behavior::Echo)]);
    let r = run(&p.service(), Call::new("c1", "t", "")).await;
    assert_eq!(r.outcome, Outcome::Success);
    assert_eq!(r.text(), "{}");
}

#[tokio::test]
async fn schema_issues_come_in_one_message() {
    let schema = json!({
        "type": "object",
        "properties": {
            "file_path": {"type": "string"},
            "limit": {"type": "integer"},
            "mode": {"enum": ["a", "b"]}
        },
        "required": ["file_path"],
        "additionalProperties": false
    });
    let (p, _rx) = pipeline(vec![ScriptTool::new("read", Behavior::Echo).schema(schema)]);
    let r = run(
        &p.service(),
        Call::new(
            "c1",
            "read",
            json!({"limit": "ten", "mode": "c", "colour": 1}),
        ),
    )
    .await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.error_code, None);
    assert_eq!(
        r.text(),
        "InputValidationError: read failed due to the following issue(s):\n\
         The required parameter `file_path` is missing\n\
         The parameter `limit` type is expected as `integer` but provided as `string`\n\
         The parameter `mode` value must be one of [\"a\",\"b\"] but provided as \"c\"\n\
         The parameter `colour` is not allowed"
    );
    assert_eq!(p.breaker().count("read"), 1);
}

#[tokio::test]
async fn tool_validate_failure_carries_message_and_code() {
    let tool = ScriptTool::new("t", Behavior::Succeed("ran")).refuse(
        2,
        "File has not been read yet. Read it first before writing to it.",
    );
    let runs = tool.executions();
    let (p, _rx) = pipeline(vec![tool]);
    let r = run(&p.service(), Call::new("c1", "t", "")).await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.error_code, Some(2));
    assert_eq!(
        r.text(),
        "File has not been read yet. Read it first before writing to it."
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(p.breaker().count("t"), 1);
}

#[tokio::test]
async fn tool_validate_failure_without_message_uses_the_default() {
    let (p, _rx) = pipeline(vec![ScriptTool::new("t", Behavior::Echo).refuse(9, "")]);
    let r = run(&p.service(), Call::new("c1", "t", "")).await;
    assert_eq!(r.text(), "tool input validation failed");
    assert_eq!(r.error_code, Some(9));
}

#[tokio::test]
async fn preview_is_emitted_before_the_gate_and_handed_to_it() {
    let tool = ScriptTool::new("t", Behavior::Succeed("ok")).preview(Ok("--- a\n+++ b".into()));
    let (sink, mut rx) = agentcore_stages::EventSink::channel();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let seen2 = seen.clone();
    let sink2 = sink.clone();
    let gate = gate_fn(move |req| {
        let seen = seen2.clone();
        let sink = sink2.clone();
        async move {
            // Mark the moment the gate runs in the event stream.
            sink.emit(Event::ModelResponse {
                tool_results: vec![],
            });
            *seen.lock().unwrap() = req.preview.clone();
            Ok(GateDecision::Allow)
        }
    });
    let p = Pipeline::builder()
        .registry(registry(vec![tool]))
        .gate(std::sync::Arc::new(gate))
        .sink(sink)
        .build();
    let r = run(&p.service(), Call::new("c1", "t", "")).await;
    assert_eq!(r.outcome, Outcome::Success);
    assert_eq!(seen.lock().unwrap().as_deref(), Some("--- a\n+++ b"));
    let events = drain(&mut rx);
    let preview_at = events
        .iter()
        .position(|e| matches!(e, Event::ToolExecUpdate { kind: UpdateKind::Preview, payload, .. } if payload == "--- a\n+++ b"))
        .expect("preview event");
    let gate_at = events
        .iter()
        .position(|e| matches!(e, Event::ModelResponse { .. }))
        .expect("gate marker");
    assert!(preview_at < gate_at);
}

#[tokio::test]
async fn preview_failure_fails_the_call() {
    let (p, _rx) = pipeline(vec![
        ScriptTool::new("t", Behavior::Succeed("ok")).preview(Err("no diff".into())),
    ]);
    let r = run(&p.service(), Call::new("c1", "t", "")).await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.text(), r#"preview tool "t": no diff"#);
    assert_eq!(p.breaker().count("t"), 1);
}

fn gated_pipeline(
    tool: ScriptTool,
    gate: impl agentcore_stages::Gate,
) -> (Pipeline, tokio::sync::mpsc::UnboundedReceiver<Event>) {
    let (sink, rx) = agentcore_stages::EventSink::channel();
    let p = Pipeline::builder()
        .registry(registry(vec![tool]))
        .gate(std::sync::Arc::new(gate))
        .sink(sink)
        .build();
    (p, rx)
}

#[tokio::test]
async fn gate_denial_uses_its_reason_or_the_default() {
    let (p, _rx) = gated_pipeline(
        ScriptTool::new("t", Behavior::Succeed("ran")),
        gate_fn(|req| async move {
            Ok(GateDecision::Deny(if req.call_id == "c1" {
                Some("commands need approval".into())
            } else {
                None
            }))
        }),
    );
    let svc = p.service();
    let r = run(&svc, Call::new("c1", "t", "")).await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert_eq!(r.text(), "commands need approval");
    let r = run(&svc, Call::new("c2", "t", "")).await;
    assert_eq!(r.text(), "tool execution denied");
    assert_eq!(p.breaker().count("t"), 0);
}

#[tokio::test]
async fn gate_error_is_a_denial() {
    let (p, _rx) = gated_pipeline(
        ScriptTool::new("t", Behavior::Succeed("ran")),
        gate_fn(|_| async { Err("policy file unreadable".into()) }),
    );
    let r = run(&p.service(), Call::new("c1", "t", "")).await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert_eq!(r.text(), "policy file unreadable");
}

#[tokio::test]
async fn five_denials_never_disable_a_tool() {
    let (p, _rx) = gated_pipeline(
        ScriptTool::new("t", Behavior::Succeed("ran")),
        gate_fn(|req| async move {
            if req.call_id == "last" {
                Ok(GateDecision::Allow)
            } else {
                Ok(GateDecision::Deny(None))
            }
        }),
    );
    let svc = p.service();
    for i in 0..5 {
        let r = run(&svc, Call::new(format!("c{i}"), "t", "")).await;
        assert_eq!(r.outcome, Outcome::Denied);
    }
    let r = run(&svc, Call::new("last", "t", "")).await;
    assert_eq!(r.outcome, Outcome::Success);
}

#[tokio::test]
async fn gate_rewrite_is_revalidated_and_previewed_again() {
    let schema = json!({
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "additionalProperties": false
    });
    let tool = ScriptTool::new("t", Behavior::Echo)
        .schema(schema)
        .preview(Ok("p".into()));
    let (p, mut rx) = gated_pipeline(
        tool,
        gate_fn(|req| async move {
            Ok(match req.call_id.as_str() {
                "good" => GateDecision::Rewrite(json!({"n": 7})),
                _ => GateDecision::Rewrite(json!({"bogus": true})),
            })
        }),
    );
    let svc = p.service();
    let r = run(&svc, Call::new("good", "t", json!({"n": 1}))).await;
    assert_eq!(r.outcome, Outcome::Success);
    assert_eq!(r.text(), r#"{"n":7}"#);
    let previews = drain(&mut rx)
        .into_iter()
        .filter(|e| {
            matches!(
                e,
                Event::ToolExecUpdate {
                    kind: UpdateKind::Preview,
                    ..
                }
            )
        })
        .count();
    assert_eq!(previews, 2, "the rewritten call's preview is emitted too");

    let r = run(&svc, Call::new("bad", "t", json!({"n": 1}))).await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert_eq!(
        r.text(),
        "the gate rewrote the arguments into an invalid call: \
         InputValidationError: t failed due to the following issue(s):\n\
         The parameter `bogus` is not allowed"
    );
    assert_eq!(p.breaker().count("t"), 0);
}

#[tokio::test]
async fn tool_error_fails_with_its_text() {
    let (p, _rx) = pipeline(vec![ScriptTool::new("t", Behavior::Fail("disk full"))]);
    let r = run(&p.service(), Call::new("c1", "t", "")).await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert!(r.is_error());
    assert_eq!(r.text(), "disk full");
    assert_eq!(p.breaker().count("t"), 1);
}

#[tokio::test]
async fn panicking_tool_fails_and_the_pipeline_keeps_serving() {
    let (p, mut rx) = pipeline(vec![
        ScriptTool::new("bad", Behavior::Panic("index out of range")),
        ScriptTool::new("good", Behavior::Succeed("fine")),
    ]);
    let svc = p.service();
    let r = run(&svc, Call::new("c1", "bad", "")).await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.text(), r#"tool "bad" panicked: index out of range"#);
    assert_eq!(p.breaker().count("bad"), 1);
    let r = run(&svc, Call::new("c2", "good", "")).await;
    assert_eq!(r.outcome, Outcome::Success);
    assert_paired(&drain(&mut rx));
}

#[tokio::test]
async fn cancelled_mid_run_is_cancelled_and_not_counted() {
    let (p, mut rx) = pipeline(vec![ScriptTool::new("t", Behavior::Hang)]);
    let c = Cancellation::new();
    let call = Call::new("c1", "t", "").with_cancellation(c.clone());
    let svc = p.service();
    let task = tokio::spawn(async move { run(&svc, call).await });
    tokio::task::yield_now().await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    c.cancel(CancelReason::Abort);
    let r = task.await.unwrap();
    assert_eq!(r.outcome, Outcome::Cancelled);
    assert_eq!(r.text(), "Tool execution cancelled.");
    assert_eq!(p.breaker().count("t"), 0);
    assert_paired(&drain(&mut rx));
}

#[tokio::test]
async fn end_event_carries_every_field() {
    let (p, mut rx) = pipeline(vec![
        ScriptTool::new("t", Behavior::Succeed("hi")).label("T"),
    ]);
    let r = run(&p.service(), Call::new("c1", "t", "")).await;
    let events = drain(&mut rx);
    let end = events.last().unwrap();
    assert_eq!(end, &Event::end(&r));
    let json = serde_json::to_value(end).unwrap();
    assert_eq!(json["type"], "tool_exec_end");
    assert_eq!(json["tool_id"], "c1");
    assert_eq!(json["tool"], "t");
    assert_eq!(json["label"], "T");
    assert_eq!(json["outcome"], "success");
    assert_eq!(json["is_error"], false);
    assert_eq!(json["content"], json!([{"type": "text", "text": "hi"}]));
    assert_eq!(json["error_code"], serde_json::Value::Null);
    assert_eq!(json["coercions"], json!([]));
    assert!(json["duration_ms"].is_u64());
}
