//! Middleware after Execute (a post-tool hook) may add to a result, refuse
//! it as `Denied` without the breaker counting it, and report on the call
//! with a `hook` update before its End.

mod common;

use std::sync::atomic::Ordering;

use agentcore_stages::{Call, Content, Event, Executed, Outcome, Pipeline, UpdateKind};
use common::*;
use serde_json::json;
use tower::ServiceBuilder;

#[tokio::test]
async fn a_refused_result_is_denied_reported_and_never_trips_the_breaker() {
    let tool = ScriptTool::new("t", Behavior::Succeed("done"));
    let executions = tool.executions();
    let (sink, mut rx) = agentcore_stages::EventSink::channel();
    let pipeline = Pipeline::builder()
        .registry(registry(vec![tool]))
        .sink(sink)
        .max_tool_errors(1)
        .build();
    let service = pipeline.service_with(ServiceBuilder::new().map_response(
        |mut call: Call<Executed>| {
            call.context()
                .report_hook(json!({"hook": "check", "exit": 2}));
            call.mark_denied();
            call.content_mut()
                .insert(0, Content::text("refused after the run"));
            call.content_mut().push(Content::text("context"));
            call
        },
    ));
    for id in ["c1", "c2", "c3"] {
        let result = run(&service, Call::new(id, "t", json!({}))).await;
        assert_eq!(result.outcome, Outcome::Denied);
        assert_eq!(result.text(), "refused after the run\ndone\ncontext");
        assert_eq!(result.error_code, None);
    }
    assert_eq!(executions.load(Ordering::SeqCst), 3, "never disabled");
    let events = drain(&mut rx);
    assert_paired(&events);
    let hook = events
        .iter()
        .position(|e| matches!(e, Event::ToolExecUpdate { call_id, kind: UpdateKind::Hook, payload } if call_id == "c1" && payload["hook"] == "check"))
        .expect("the hook update");
    let end = events
        .iter()
        .position(|e| matches!(e, Event::ToolExecEnd { call_id, .. } if call_id == "c1"))
        .unwrap();
    assert!(hook < end);
    let wire = serde_json::to_value(&events[hook]).unwrap();
    assert_eq!(wire["kind"], "hook");
}
