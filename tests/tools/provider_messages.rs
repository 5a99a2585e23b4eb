//! Tool-result messages and assistant tool calls in the provider shapes,
//! checked against the example payloads of the Anthropic Messages API,
//! OpenAI Chat Completions and OpenAI Responses API documentation; and
//! the registry's tools written as each provider's `tools`.

use std::time::Duration;

use std::sync::Arc;

use agentcore::message::openai::responses;
use agentcore::message::{MessageError, ToolCall, anthropic, mcp, openai};
use agentcore::schemars::JsonSchema;
use agentcore::tools::fn_tool;
use agentcore::{
    Content, Outcome, RawArgs, ToolOutput, ToolRegistry, ToolResult, ToolResultMessage,
};
use serde::Deserialize;
use serde_json::{Value, json};

fn result(id: &str, tool: &str, outcome: Outcome, content: Vec<Content>) -> ToolResult {
    let mut result = ToolResult::new(id, tool, outcome, content);
    result.duration = Duration::from_millis(3);
    result
}

/// The Messages API response from Anthropic's tool-use guide.
fn anthropic_weather_response() -> Value {
    json!({
        "id": "msg_01Aq9w938a90dw8q",
        "type": "message",
        "model": "claude-sonnet-4-5",
        "stop_reason": "tool_use",
        "role": "assistant",
        "content": [
            {
                "type": "text",
                "text": "I'll check the current weather in San Francisco for you."
            },
            {
                "type": "tool_use",
                "id": "toolu_01A09q90qw90lq917835lq9",
                "name": "get_weather",
                "input": {"location": "San Francisco, CA", "unit": "celsius"}
            }
        ],
        "usage": {"input_tokens": 384, "output_tokens": 92}
    })
}

/// The Chat Completions response from OpenAI's function-calling guide.
fn openai_weather_response() -> Value {
    json!({
        "id": "chatcmpl-abc123",
        "object": "chat.completion",
        "created": 1699896916,
        "model": "gpt-4o-mini",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": "call_abc123",
                    "type": "function",
                    "function": {
                        "name": "get_current_weather",
                        "arguments": "{\n\"location\": \"Boston, MA\"\n}"
                    }
                }],
                "refusal": null
            },
            "logprobs": null,
            "finish_reason": "tool_calls"
        }],
        "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99}
    })
}

// ---- Anthropic: parsing tool_use ----

#[test]
fn anthropic_weather_example_parses_into_one_call() {
    let calls = anthropic::parse_tool_calls(&anthropic_weather_response()).unwrap();
    assert_eq!(
        calls,
        vec![ToolCall::new(
            "toolu_01A09q90qw90lq917835lq9",
            "get_weather",
            json!({"location": "San Francisco, CA", "unit": "celsius"}),
        )]
    );
}

#[test]
fn anthropic_parallel_tool_use_keeps_source_order_and_skips_other_blocks() {
    let message = json!({
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Two lookups.", "signature": "sig"},
            {"type": "text", "text": "I'll check both."},
            {"type": "tool_use", "id": "toolu_01", "name": "get_weather",
             "input": {"location": "San Francisco, CA"}},
            {"type": "tool_use", "id": "toolu_02", "name": "get_time",
             "input": {"timezone": "America/New_York"}}
        ]
    });
    let calls = anthropic::parse_tool_calls(&message).unwrap();
    let ids: Vec<&str> = calls.iter().map(|c| c.call_id.as_str()).collect();
    assert_eq!(ids, ["toolu_01", "toolu_02"]);
    assert_eq!(calls[1].name, "get_time");
}

#[test]
fn anthropic_plain_string_content_has_no_calls() {
    let message = json!({"role": "assistant", "content": "The weather is sunny."});
    assert_eq!(anthropic::parse_tool_calls(&message).unwrap(), vec![]);
    let message = json!({"role": "assistant", "content": [{"type": "text", "text": "Hi"}]});
    assert_eq!(anthropic::parse_tool_calls(&message).unwrap(), vec![]);
}

#[test]
fn anthropic_single_tool_use_block_parses() {
    let block = &anthropic_weather_response()["content"][1];
    let call = anthropic::parse_tool_use(block).unwrap();
    assert_eq!(call.call_id, "toolu_01A09q90qw90lq917835lq9");
    let err = anthropic::parse_tool_use(&anthropic_weather_response()["content"][0]).unwrap_err();
    assert!(matches!(err, MessageError::UnexpectedType { .. }), "{err}");
}

#[test]
fn anthropic_hostile_messages_are_typed_errors() {
    let cases: Vec<(Value, MessageError)> = vec![
        (
            json!([1, 2]),
            MessageError::WrongType {
                path: "message".into(),
                expected: "an object",
                found: "an array",
            },
        ),
        (
            json!({"content": []}),
            MessageError::Missing {
                path: "role".into(),
            },
        ),
        (
            json!({"role": "user", "content": []}),
            MessageError::WrongRole {
                found: "user".into(),
            },
        ),
        (
            json!({"role": "assistant"}),
            MessageError::Missing {
                path: "content".into(),
            },
        ),
        (
            json!({"role": "assistant", "content": 7}),
            MessageError::WrongType {
                path: "content".into(),
                expected: "a string or an array of content blocks",
                found: "a number",
            },
        ),
        (
            json!({"role": "assistant", "content": [null]}),
            MessageError::WrongType {
                path: "content[0]".into(),
                expected: "an object",
                found: "null",
            },
        ),
        (
            json!({"role": "assistant", "content": [{"text": "no type"}]}),
            MessageError::Missing {
                path: "content[0].type".into(),
            },
        ),
        (
            json!({"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}),
            MessageError::Missing {
                path: "content[0].id".into(),
            },
        ),
        (
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": 5, "name": "f", "input": {}}]}),
            MessageError::WrongType {
                path: "content[0].id".into(),
                expected: "a string",
                found: "a number",
            },
        ),
        (
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": "a", "input": {}}]}),
            MessageError::Missing {
                path: "content[0].name".into(),
            },
        ),
        (
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "", "input": {}}]}),
            MessageError::Empty {
                path: "content[0].name".into(),
            },
        ),
        (
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f"}]}),
            MessageError::Missing {
                path: "content[0].input".into(),
            },
        ),
        (
            json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "a", "name": "f", "input": {}},
                {"type": "tool_use", "id": "a", "name": "g", "input": {}}
            ]}),
            MessageError::DuplicateId {
                path: "content[1].id".into(),
                call_id: "a".into(),
            },
        ),
    ];
    for (message, expected) in cases {
        assert_eq!(
            anthropic::parse_tool_calls(&message),
            Err(expected),
            "{message}"
        );
    }
}

// ---- Anthropic: tool_result ----

#[test]
fn anthropic_tool_result_matches_the_documented_shape() {
    let r = result(
        "toolu_01A09q90qw90lq917835lq9",
        "get_weather",
        Outcome::Success,
        vec![Content::text("15 degrees")],
    );
    assert_eq!(
        anthropic::user_message([&r]),
        json!({
            "role": "user",
            "content": [{
                "type": "tool_result",
                "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                "content": [{"type": "text", "text": "15 degrees"}],
                "is_error": false
            }]
        })
    );
}

#[test]
fn anthropic_tool_result_carries_images_and_json_as_text() {
    let r = result(
        "toolu_01",
        "screenshot",
        Outcome::Success,
        vec![
            Content::text("15 degrees"),
            Content::json(json!({"temp": 15, "unit": "celsius"})),
            Content::image("image/jpeg", "/9j/4AAQSkZJRg=="),
        ],
    );
    assert_eq!(
        anthropic::tool_result_block(&r),
        json!({
            "type": "tool_result",
            "tool_use_id": "toolu_01",
            "content": [
                {"type": "text", "text": "15 degrees"},
                {"type": "text", "text": "{\"temp\":15,\"unit\":\"celsius\"}"},
                {"type": "image", "source": {
                    "type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQSkZJRg=="
                }}
            ],
            "is_error": false
        })
    );
}

#[test]
fn anthropic_error_result_sets_is_error() {
    let r = result(
        "toolu_01",
        "get_weather",
        Outcome::Failed,
        vec![Content::text(
            "ConnectionError: the weather service API is not available (HTTP 500)",
        )],
    );
    let message = ToolResultMessage::from_result(&r);
    let block = anthropic::tool_result_block(&message);
    assert_eq!(block["is_error"], true);
    assert_eq!(
        block["content"][0]["text"],
        "ConnectionError: the weather service API is not available (HTTP 500)"
    );
}

#[test]
fn anthropic_user_message_holds_every_result_in_order() {
    let results = vec![
        result("toolu_01", "a", Outcome::Success, vec![Content::text("1")]),
        result("toolu_02", "b", Outcome::Skipped, vec![Content::text("2")]),
        result("toolu_03", "c", Outcome::Success, vec![]),
    ];
    let message = anthropic::user_message(&results);
    let ids: Vec<&str> = message["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_01", "toolu_02", "toolu_03"]);
    assert_eq!(message["content"][1]["is_error"], true);
    assert_eq!(message["content"][2]["content"], json!([]));
}

#[test]
fn anthropic_calls_round_trip_through_an_assistant_message() {
    let calls = vec![
        ToolCall::new("toolu_01", "get_weather", json!({"location": "Paris"})),
        ToolCall::new(
            "toolu_02",
            "get_time",
            RawArgs::Text("{\"tz\":\"UTC\"}".into()),
        ),
        ToolCall::new("toolu_03", "list", ""),
    ];
    let message = anthropic::assistant_message(Some("Checking."), &calls).unwrap();
    assert_eq!(
        message["content"][0],
        json!({"type": "text", "text": "Checking."})
    );
    let parsed = anthropic::parse_tool_calls(&message).unwrap();
    assert_eq!(
        parsed,
        vec![
            ToolCall::new("toolu_01", "get_weather", json!({"location": "Paris"})),
            ToolCall::new("toolu_02", "get_time", json!({"tz": "UTC"})),
            ToolCall::new("toolu_03", "list", json!({})),
        ]
    );
    let documented = anthropic_weather_response();
    let reparsed = anthropic::parse_tool_calls(&documented).unwrap();
    let rebuilt =
        anthropic::assistant_message(documented["content"][0]["text"].as_str(), &reparsed).unwrap();
    assert_eq!(rebuilt["content"], documented["content"]);
}

#[test]
fn anthropic_refuses_to_write_malformed_argument_text() {
    let call = ToolCall::new("toolu_09", "f", "{not json");
    let err = anthropic::tool_use_block(&call).unwrap_err();
    assert!(matches!(&err, MessageError::ArgsNotJson { call_id, .. } if call_id == "toolu_09"));
    assert!(err.to_string().contains("toolu_09"), "{err}");
}

// ---- OpenAI: parsing tool_calls ----

#[test]
fn openai_weather_example_parses_with_arguments_as_text() {
    let response = openai_weather_response();
    let calls = openai::parse_tool_calls(&response["choices"][0]["message"]).unwrap();
    assert_eq!(
        calls,
        vec![ToolCall::new(
            "call_abc123",
            "get_current_weather",
            RawArgs::Text("{\n\"location\": \"Boston, MA\"\n}".into()),
        )]
    );
}

#[test]
fn openai_parallel_calls_keep_source_order() {
    let message = json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [
            {"id": "call_12345xyz", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris, France\"}"}},
            {"id": "call_67890abc", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"location\":\"Bogotá, Colombia\"}"}},
            {"id": "call_99999def", "type": "function",
             "function": {"name": "send_email", "arguments": ""}}
        ]
    });
    let calls = openai::parse_tool_calls(&message).unwrap();
    let ids: Vec<&str> = calls.iter().map(|c| c.call_id.as_str()).collect();
    assert_eq!(ids, ["call_12345xyz", "call_67890abc", "call_99999def"]);
    assert_eq!(
        calls[1].args,
        RawArgs::Text("{\"location\":\"Bogotá, Colombia\"}".into())
    );
    assert_eq!(calls[2].args, RawArgs::Text(String::new()));
}

#[test]
fn openai_message_without_tool_calls_has_no_calls() {
    for message in [
        json!({"role": "assistant", "content": "Hello!"}),
        json!({"role": "assistant", "content": "Hello!", "tool_calls": null}),
        json!({"role": "assistant", "content": null, "tool_calls": []}),
    ] {
        assert_eq!(openai::parse_tool_calls(&message).unwrap(), vec![]);
    }
}

#[test]
fn openai_malformed_argument_text_is_kept_for_the_pipeline() {
    let message = json!({"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": "}}
    ]});
    let calls = openai::parse_tool_calls(&message).unwrap();
    assert_eq!(calls[0].args, RawArgs::Text("{\"a\": ".into()));
}

#[test]
fn openai_hostile_messages_are_typed_errors() {
    let cases: Vec<(Value, MessageError)> = vec![
        (
            json!("assistant"),
            MessageError::WrongType {
                path: "message".into(),
                expected: "an object",
                found: "a string",
            },
        ),
        (
            json!({"role": "tool", "tool_call_id": "x", "content": "y"}),
            MessageError::WrongRole {
                found: "tool".into(),
            },
        ),
        (
            json!({"role": 1}),
            MessageError::WrongType {
                path: "role".into(),
                expected: "a string",
                found: "a number",
            },
        ),
        (
            json!({"role": "assistant", "tool_calls": {"id": "x"}}),
            MessageError::WrongType {
                path: "tool_calls".into(),
                expected: "an array",
                found: "an object",
            },
        ),
        (
            json!({"role": "assistant", "tool_calls": ["call_1"]}),
            MessageError::WrongType {
                path: "tool_calls[0]".into(),
                expected: "an object",
                found: "a string",
            },
        ),
        (
            json!({"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
            MessageError::Missing {
                path: "tool_calls[0].id".into(),
            },
        ),
        (
            json!({"role": "assistant", "tool_calls": [{"id": "", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
            MessageError::Empty {
                path: "tool_calls[0].id".into(),
            },
        ),
        (
            json!({"role": "assistant", "tool_calls": [{"id": "c", "type": "custom", "custom": {"name": "f", "input": "x"}}]}),
            MessageError::UnexpectedType {
                path: "tool_calls[0].type".into(),
                expected: "\"function\", the only tool call type supported",
                found: "custom".into(),
            },
        ),
        (
            json!({"role": "assistant", "tool_calls": [{"id": "c", "type": 3}]}),
            MessageError::WrongType {
                path: "tool_calls[0].type".into(),
                expected: "a string",
                found: "a number",
            },
        ),
        (
            json!({"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]}),
            MessageError::Missing {
                path: "tool_calls[0].function".into(),
            },
        ),
        (
            json!({"role": "assistant", "tool_calls": [{"id": "c", "function": "f"}]}),
            MessageError::WrongType {
                path: "tool_calls[0].function".into(),
                expected: "an object",
                found: "a string",
            },
        ),
        (
            json!({"role": "assistant", "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}),
            MessageError::Missing {
                path: "tool_calls[0].function.name".into(),
            },
        ),
        (
            json!({"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f"}}]}),
            MessageError::Missing {
                path: "tool_calls[0].function.arguments".into(),
            },
        ),
        (
            json!({"role": "assistant", "tool_calls": [
                {"id": "c", "function": {"name": "f", "arguments": "{}"}},
                {"id": "c", "function": {"name": "g", "arguments": "{}"}}
            ]}),
            MessageError::DuplicateId {
                path: "tool_calls[1].id".into(),
                call_id: "c".into(),
            },
        ),
    ];
    for (message, expected) in cases {
        assert_eq!(
            openai::parse_tool_calls(&message),
            Err(expected),
            "{message}"
        );
    }
}

#[test]
fn openai_calls_round_trip_through_an_assistant_message() {
    let response = openai_weather_response();
    let documented = &response["choices"][0]["message"];
    let calls = openai::parse_tool_calls(documented).unwrap();
    let rebuilt = openai::assistant_message(None, &calls);
    assert_eq!(rebuilt["tool_calls"], documented["tool_calls"]);
    assert_eq!(rebuilt["content"], Value::Null);
    assert_eq!(openai::parse_tool_calls(&rebuilt).unwrap(), calls);

    let value_args = ToolCall::new("call_1", "f", json!({"a": [1, 2]}));
    let entry = openai::tool_call(&value_args);
    assert_eq!(entry["function"]["arguments"], "{\"a\":[1,2]}");
    assert_eq!(
        openai::tool_call(&ToolCall::new("c", "f", ""))["function"]["arguments"],
        "{}"
    );

    let text_only = openai::assistant_message(Some("Hi"), &[]);
    assert_eq!(text_only, json!({"role": "assistant", "content": "Hi"}));
}

// ---- OpenAI: tool messages ----

#[test]
fn openai_tool_message_matches_the_documented_shape() {
    let r = result(
        "call_abc123",
        "get_current_weather",
        Outcome::Success,
        vec![Content::json(json!({"temperature": 22, "unit": "celsius"}))],
    );
    let msg = openai::tool_message(&r);
    assert_eq!(
        msg.message,
        json!({
            "role": "tool",
            "tool_call_id": "call_abc123",
            "content": "{\"temperature\":22,\"unit\":\"celsius\"}"
        })
    );
    assert!(msg.images.is_empty());
}

#[test]
fn openai_images_become_notes_and_a_following_user_message() {
    let r = result(
        "call_shot",
        "screenshot",
        Outcome::Success,
        vec![
            Content::text("Captured the page."),
            Content::image("image/png", "iVBORw0KGgo="),
        ],
    );
    let msg = openai::tool_message(&r);
    assert_eq!(
        msg.message["content"],
        "Captured the page.\n[Image 1 (image/png) is attached in the next user message.]"
    );
    assert_eq!(
        openai::image_message(&msg.images),
        Some(json!({
            "role": "user",
            "content": [{
                "type": "image_url",
                "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}
            }]
        }))
    );
}

#[test]
fn openai_turn_messages_number_images_across_results() {
    let results = vec![
        result(
            "call_1",
            "shot",
            Outcome::Success,
            vec![Content::image("image/png", "AAA=")],
        ),
        result(
            "call_2",
            "read",
            Outcome::Failed,
            vec![Content::text("no such file")],
        ),
        result(
            "call_3",
            "shot",
            Outcome::Success,
            vec![Content::image("image/jpeg", "BBB=")],
        ),
    ];
    let messages = openai::messages(&results);
    assert_eq!(messages.len(), 4);
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["tool", "tool", "tool", "user"]);
    assert_eq!(
        messages[0]["content"],
        "[Image 1 (image/png) is attached in the next user message.]"
    );
    assert_eq!(messages[1]["content"], "no such file");
    assert_eq!(
        messages[2]["content"],
        "[Image 2 (image/jpeg) is attached in the next user message.]"
    );
    let urls: Vec<&str> = messages[3]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["image_url"]["url"].as_str().unwrap())
        .collect();
    assert_eq!(
        urls,
        ["data:image/png;base64,AAA=", "data:image/jpeg;base64,BBB="]
    );
}

#[test]
fn openai_turn_without_images_has_only_tool_messages() {
    let results = vec![result(
        "call_1",
        "a",
        Outcome::Success,
        vec![Content::text("x")],
    )];
    let messages = openai::messages(&results);
    assert_eq!(
        messages,
        vec![json!({"role": "tool", "tool_call_id": "call_1", "content": "x"})]
    );
}

// ---- MCP ----

#[test]
fn mcp_call_tool_result_carries_text_images_and_is_error() {
    let r = result(
        "c1",
        "screenshot",
        Outcome::Success,
        vec![
            Content::text("Captured."),
            Content::json(json!({"width": 800})),
            Content::image("image/png", "iVBORw0KGgo="),
        ],
    );
    assert_eq!(
        mcp::call_tool_result(&r),
        json!({
            "content": [
                {"type": "text", "text": "Captured."},
                {"type": "text", "text": "{\"width\":800}"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
            ],
            "isError": false
        })
    );
    let denied = result(
        "c2",
        "bash",
        Outcome::Denied,
        vec![Content::text("tool execution denied")],
    );
    let message = ToolResultMessage::from_result(&denied);
    assert_eq!(
        mcp::call_tool_result(&message),
        json!({
            "content": [{"type": "text", "text": "tool execution denied"}],
            "isError": true
        })
    );
}

// ---- hostile input at scale ----

#[test]
fn huge_and_deep_inputs_do_not_panic() {
    let mut deep = json!({});
    for _ in 0..100 {
        deep = json!({"a": deep});
    }
    let many: Vec<Value> = (0..2_000)
        .map(
            |i| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": "f", "input": deep}),
        )
        .collect();
    let calls =
        anthropic::parse_tool_calls(&json!({"role": "assistant", "content": many})).unwrap();
    assert_eq!(calls.len(), 2_000);

    let weird = [
        json!(null),
        json!(true),
        json!(0),
        json!([]),
        json!({}),
        json!({"role": null}),
        json!({"role": "assistant", "content": [[]]}),
        json!({"role": "assistant", "content": [{"type": null}]}),
        json!({"role": "assistant", "tool_calls": [null]}),
        json!({"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": null}}]}),
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "\u{0}", "name": "\u{202e}", "input": null}]}),
    ];
    for message in &weird {
        let _ = anthropic::parse_tool_calls(message);
        let _ = openai::parse_tool_calls(message);
    }
}

// ---- OpenAI Chat Completions: a whole completion ----

#[test]
fn openai_whole_completion_parses_like_its_message() {
    let completion = openai_weather_response();
    let from_completion = openai::parse_tool_calls(&completion).unwrap();
    let from_message = openai::parse_tool_calls(&completion["choices"][0]["message"]).unwrap();
    assert_eq!(from_completion, from_message);
    assert_eq!(from_completion[0].call_id, "call_abc123");
    assert_eq!(from_completion[0].name, "get_current_weather");
}

#[test]
fn openai_completion_without_one_choice_says_what_to_pass() {
    let mut empty = openai_weather_response();
    empty["choices"] = json!([]);
    let err = openai::parse_tool_calls(&empty).unwrap_err();
    assert_eq!(err, MessageError::NoChoices);
    assert!(
        err.to_string()
            .contains("pass a completion with one choice, or the message itself")
    );

    let mut several = openai_weather_response();
    let choice = several["choices"][0].clone();
    several["choices"] = json!([choice.clone(), choice]);
    let err = openai::parse_tool_calls(&several).unwrap_err();
    assert_eq!(err, MessageError::SeveralChoices { count: 2 });
    assert!(err.to_string().contains("`choices[i].message`"), "{err}");
}

#[test]
fn openai_completion_errors_name_the_place_inside_the_choice() {
    let mut bad = openai_weather_response();
    bad["choices"][0]["message"]["tool_calls"][0]["id"] = json!(7);
    assert_eq!(
        openai::parse_tool_calls(&bad).unwrap_err().to_string(),
        "choices[0].message.tool_calls[0].id must be a string, found a number"
    );
    for (completion, message) in [
        (
            json!({"choices": {}}),
            "choices must be an array, found an object",
        ),
        (
            json!({"choices": [3]}),
            "choices[0] must be an object, found a number",
        ),
        (json!({"choices": [{}]}), "choices[0].message is missing"),
        (
            json!({"choices": [{"message": null}]}),
            "choices[0].message must be an object, found null",
        ),
        (
            json!({"choices": [{"message": {}}]}),
            "choices[0].message.role is missing",
        ),
        (
            json!({"choices": [{"message": {"role": "user"}}]}),
            "role is \"user\"; tool calls are read from an \"assistant\" message",
        ),
    ] {
        assert_eq!(
            openai::parse_tool_calls(&completion)
                .unwrap_err()
                .to_string(),
            message,
            "{completion}"
        );
    }
}

#[test]
fn each_openai_parser_points_to_the_other_for_the_other_apis_shape() {
    let err = openai::parse_tool_calls(&responses_weather_response()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "this is a Responses API response (it has \"output\"); read its calls with openai::responses::parse_function_calls"
    );
    let completion = openai_weather_response();
    for chat in [&completion, &completion["choices"][0]["message"]] {
        let err = responses::parse_function_calls(chat).unwrap_err();
        assert!(
            matches!(
                err,
                MessageError::OtherApi {
                    use_instead: "openai::parse_tool_calls",
                    ..
                }
            ),
            "{err}"
        );
    }
}

// ---- OpenAI Responses API ----

/// A Responses API response with parallel function calls, shaped as in
/// OpenAI's function-calling guide: a reasoning item, two `function_call`
/// items, a message.
fn responses_weather_response() -> Value {
    json!({
        "id": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
        "object": "response",
        "created_at": 1741476542,
        "status": "completed",
        "model": "gpt-4.1-2025-04-14",
        "output": [
            {"type": "reasoning", "id": "rs_6806bfca0b2481918a5748308061a260", "summary": []},
            {
                "type": "function_call",
                "id": "fc_12345xyz",
                "call_id": "call_12345xyz",
                "name": "get_weather",
                "arguments": "{\"location\":\"Paris, France\"}",
                "status": "completed"
            },
            {
                "type": "function_call",
                "id": "fc_67890abc",
                "call_id": "call_67890abc",
                "name": "get_weather",
                "arguments": "{\"location\":\"Bogotá, Colombia\"}",
                "status": "completed"
            },
            {
                "type": "message",
                "id": "msg_67ccd2bf17f0819081ff3bb2cf6508e6",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Checking both.", "annotations": []}]
            }
        ],
        "parallel_tool_calls": true,
        "usage": {"input_tokens": 291, "output_tokens": 23, "total_tokens": 314}
    })
}

#[test]
fn responses_function_calls_parse_from_the_response_or_its_output() {
    let response = responses_weather_response();
    let calls = responses::parse_function_calls(&response).unwrap();
    assert_eq!(
        calls,
        [
            ToolCall::new(
                "call_12345xyz",
                "get_weather",
                RawArgs::Text(r#"{"location":"Paris, France"}"#.into())
            ),
            ToolCall::new(
                "call_67890abc",
                "get_weather",
                RawArgs::Text(r#"{"location":"Bogotá, Colombia"}"#.into())
            ),
        ]
    );
    assert_eq!(
        responses::parse_function_calls(&response["output"]).unwrap(),
        calls
    );
}

#[test]
fn responses_without_function_calls_have_no_calls() {
    let mut response = responses_weather_response();
    response["output"] = json!([response["output"][3].clone()]);
    assert!(
        responses::parse_function_calls(&response)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn responses_hostile_shapes_are_typed_errors() {
    let call = |fields: Value| {
        let mut item =
            json!({"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"});
        for (k, v) in fields.as_object().unwrap() {
            item[k] = v.clone();
        }
        json!({"output": [{"type": "reasoning", "id": "rs_1"}, item]})
    };
    for (response, message) in [
        (
            json!(3),
            "response must be a response object or its output array, found a number",
        ),
        (json!({"id": "resp_1"}), "output is missing"),
        (
            json!({"output": "x"}),
            "output must be an array of output items, found a string",
        ),
        (json!([null]), "output[0] must be an object, found null"),
        (json!([{}]), "output[0].type is missing"),
        (
            call(json!({"call_id": ""})),
            "output[1].call_id must not be empty",
        ),
        (
            call(json!({"call_id": 1})),
            "output[1].call_id must be a string, found a number",
        ),
        (
            call(json!({"name": null})),
            "output[1].name must be a string, found null",
        ),
        (
            call(json!({"arguments": {"location": "Paris"}})),
            "output[1].arguments must be a string, found an object",
        ),
    ] {
        assert_eq!(
            responses::parse_function_calls(&response)
                .unwrap_err()
                .to_string(),
            message,
            "{response}"
        );
    }
}

#[test]
fn responses_function_call_outputs_match_the_documented_shape() {
    let results = [
        result(
            "call_12345xyz",
            "get_weather",
            Outcome::Success,
            vec![Content::text("15°C")],
        ),
        result(
            "call_67890abc",
            "get_weather",
            Outcome::Failed,
            vec![
                Content::text("weather service unavailable"),
                Content::json(json!({"retry": true})),
            ],
        ),
    ];
    assert_eq!(
        responses::function_call_outputs(&results),
        [
            json!({"type": "function_call_output", "call_id": "call_12345xyz", "output": "15°C"}),
            json!({
                "type": "function_call_output",
                "call_id": "call_67890abc",
                "output": "weather service unavailable\n{\"retry\":true}"
            }),
        ]
    );
}

#[test]
fn responses_image_results_become_input_parts() {
    let r = result(
        "call_1",
        "screenshot",
        Outcome::Success,
        vec![
            Content::text("the page:"),
            Content::image("image/png", "iVBORw0KGgo="),
        ],
    );
    assert_eq!(
        responses::function_call_output(&r),
        json!({
            "type": "function_call_output",
            "call_id": "call_1",
            "output": [
                {"type": "input_text", "text": "the page:"},
                {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
            ]
        })
    );
}

#[test]
fn responses_calls_round_trip_through_function_call_items() {
    let calls = responses::parse_function_calls(&responses_weather_response()).unwrap();
    let replayed: Vec<Value> = calls.iter().map(responses::function_call).collect();
    assert_eq!(
        replayed[0],
        json!({
            "type": "function_call",
            "call_id": "call_12345xyz",
            "name": "get_weather",
            "arguments": "{\"location\":\"Paris, France\"}"
        })
    );
    assert_eq!(
        responses::parse_function_calls(&json!(replayed)).unwrap(),
        calls
    );
}

// ---- the registry's tools, in each provider's shape ----

/// Arguments of a test tool: this doc comment is not in the schema.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "agentcore::schemars")]
#[allow(dead_code)]
struct LocationArgs {
    /// The city.
    location: String,
}

fn weather_registry() -> Arc<ToolRegistry> {
    let tool = |name: &'static str| {
        fn_tool(
            name,
            "Looks the weather up.",
            |_: LocationArgs, _cx| async { Ok(ToolOutput::text("sunny")) },
        )
        .into_dyn()
    };
    Arc::new(
        ToolRegistry::new()
            .with(tool("get_weather"))
            .unwrap()
            .with(tool("alerts"))
            .unwrap(),
    )
}

#[test]
fn each_provider_lists_the_registry_tools_in_registry_order() {
    let registry = weather_registry();
    let order: Vec<String> = registry
        .iter()
        .map(|t| t.tool().name().to_owned())
        .collect();
    assert_eq!(order, ["alerts", "get_weather"]);

    let anthropic = anthropic::tool_definitions(&registry);
    let openai = openai::tool_definitions(&registry);
    let responses = responses::tool_definitions(&registry);
    for (i, registered) in registry.iter().enumerate() {
        let tool = registered.tool().as_ref();
        assert_eq!(anthropic[i], anthropic::tool_definition(tool));
        assert_eq!(openai[i], openai::tool_definition(tool));
        assert_eq!(responses[i], responses::tool_definition(tool));
    }
    assert_eq!(anthropic.len(), 2);
    assert_eq!(openai.len(), 2);
    assert_eq!(responses.len(), 2);
}

#[test]
fn responses_tool_definitions_are_flat_and_not_strict() {
    let registry = weather_registry();
    let definitions = responses::tool_definitions(&registry);
    let schema = registry.get("get_weather").unwrap().tool().schema().clone();
    assert_eq!(
        definitions[1],
        json!({
            "type": "function",
            "name": "get_weather",
            "description": "Looks the weather up.",
            "parameters": schema,
            "strict": false
        })
    );
    assert!(definitions[1].get("function").is_none());
    assert_eq!(
        openai::tool_definitions(&registry)[1]["function"]["parameters"],
        definitions[1]["parameters"]
    );
}
