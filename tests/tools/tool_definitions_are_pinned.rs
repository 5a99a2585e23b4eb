//! The tool definitions the model sees (`agentcore tools --format …`) are
//! pinned byte for byte: a change to a description, a schema keyword, the
//! order of `required` or of the properties shows up here and must be made
//! on purpose, by updating the snapshot in `tests/snapshots/` in the same
//! commit.

use std::process::Command;

fn definitions(format: &str) -> String {
    definitions_with(format, &[])
}

/// `agentcore tools --format FORMAT` with `extra` arguments.
fn definitions_with(format: &str, extra: &[&std::ffi::OsStr]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_agentcore"))
        .args(["tools", "--format", format])
        .args(extra)
        .output()
        .expect("run agentcore tools");
    assert!(
        output.status.success(),
        "agentcore tools --format {format}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8 definitions")
}

/// bash's bullet on the sandbox, as the snapshots hold it (a JSON string).
const SANDBOX_BULLET_START: &str = "\\n- Commands run in a sandbox: ";
const SANDBOX_BULLET_END: &str = "the user is asked.";

/// `pinned` without bash's bullet on the sandbox: the definitions of a
/// machine that cannot confine at all.
fn without_sandbox_bullet(pinned: &str) -> String {
    let start = pinned
        .find(SANDBOX_BULLET_START)
        .expect("the snapshot holds bash's bullet on the sandbox");
    let end = start
        + pinned[start..]
            .find(SANDBOX_BULLET_END)
            .expect("bash's bullet on the sandbox ends")
        + SANDBOX_BULLET_END.len();
    format!("{}{}", &pinned[..start], &pinned[end..])
}

fn assert_pinned(format: &str, pinned: &str) {
    // The snapshots hold bash's bullet on the sandbox, which a machine
    // that cannot confine at all leaves out: both variants are pinned.
    let pinned = if agentcore::sandbox::check().enforced() == "unconfined" {
        without_sandbox_bullet(pinned)
    } else {
        pinned.to_owned()
    };
    let pinned = pinned.as_str();
    let now = definitions(format);
    if now != pinned {
        let diff = similar::TextDiff::from_lines(pinned, now.as_str())
            .unified_diff()
            .header("pinned", "now")
            .to_string();
        panic!(
            "the {format} tool definitions differ from tests/snapshots/tools_{format}.json:\n{diff}"
        );
    }
}

#[test]
fn anthropic_definitions_are_unchanged() {
    assert_pinned(
        "anthropic",
        include_str!("../snapshots/tools_anthropic.json"),
    );
}

#[test]
fn openai_definitions_are_unchanged() {
    assert_pinned("openai", include_str!("../snapshots/tools_openai.json"));
}

#[test]
fn mcp_definitions_are_unchanged() {
    assert_pinned("mcp", include_str!("../snapshots/tools_mcp.json"));
}

/// The unconfined variant, on every machine: with `[sandbox] mode = "off"`
/// bash's description is the pinned one without its bullet on the sandbox.
#[test]
fn unconfined_definitions_are_the_pinned_ones_without_the_sandbox_bullet() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "[sandbox]\nmode = \"off\"\n").unwrap();
    for (format, pinned) in [
        (
            "anthropic",
            include_str!("../snapshots/tools_anthropic.json"),
        ),
        ("openai", include_str!("../snapshots/tools_openai.json")),
        ("mcp", include_str!("../snapshots/tools_mcp.json")),
    ] {
        let now = definitions_with(format, &["--policy".as_ref(), policy.as_os_str()]);
        let pinned = without_sandbox_bullet(pinned);
        if now != pinned {
            let diff = similar::TextDiff::from_lines(pinned.as_str(), now.as_str())
                .unified_diff()
                .header("pinned, without the sandbox bullet", "now, sandbox off")
                .to_string();
            panic!("the unconfined {format} tool definitions differ:\n{diff}");
        }
    }
}

/// `checkpoints` and `rewind`, offered only when named, are pinned too
/// (`agentcore tools --tools checkpoints,rewind`): their text is what the
/// model reads about undoing work.
#[test]
fn checkpoint_tool_definitions_are_unchanged() {
    for (format, pinned) in [
        (
            "anthropic",
            include_str!("../snapshots/tools_checkpoints_anthropic.json"),
        ),
        (
            "openai",
            include_str!("../snapshots/tools_checkpoints_openai.json"),
        ),
        (
            "mcp",
            include_str!("../snapshots/tools_checkpoints_mcp.json"),
        ),
    ] {
        let now = definitions_with(format, &["--tools".as_ref(), "checkpoints,rewind".as_ref()]);
        if now != pinned {
            let diff = similar::TextDiff::from_lines(pinned, now.as_str())
                .unified_diff()
                .header("pinned", "now")
                .to_string();
            panic!(
                "the {format} definitions of checkpoints and rewind differ from tests/snapshots/tools_checkpoints_{format}.json:\n{diff}"
            );
        }
    }
}

/// `apply_patch` and `edit_lines`, offered only when named, are pinned
/// too, with `read` as it is beside `edit_lines` (its description names
/// the anchors): `agentcore tools --tools read,apply_patch,edit_lines`.
#[test]
fn on_request_edit_tool_definitions_are_unchanged() {
    for (format, pinned) in [
        (
            "anthropic",
            include_str!("../snapshots/tools_on_request_anthropic.json"),
        ),
        (
            "openai",
            include_str!("../snapshots/tools_on_request_openai.json"),
        ),
        (
            "mcp",
            include_str!("../snapshots/tools_on_request_mcp.json"),
        ),
    ] {
        let now = definitions_with(
            format,
            &["--tools".as_ref(), "read,apply_patch,edit_lines".as_ref()],
        );
        if now != pinned {
            let diff = similar::TextDiff::from_lines(pinned, now.as_str())
                .unified_diff()
                .header("pinned", "now")
                .to_string();
            panic!(
                "the {format} definitions of read, apply_patch and edit_lines differ from tests/snapshots/tools_on_request_{format}.json:\n{diff}"
            );
        }
    }
}
