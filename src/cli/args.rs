//! Options, as `docs/cli.md` lists them.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};

use agentcore::approval::Mode;
use agentcore::scheduler::SteeringPolicy;
use agentcore::tools::set::{Builtin, ToolSet};

use super::term::ColorChoice;

/// agentcore: the tool-execution kernel of an AI coding agent.
#[derive(Debug, Parser)]
#[command(name = "agentcore", version, about, long_about = None, after_help = EXIT_STATUS)]
pub struct Cli {
    /// Colour the output for people: auto (a terminal that can show it,
    /// unless NO_COLOR is set to a non-empty value), always or never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The exit statuses, as `--help` ends with them (and docs/cli.md lists).
pub const EXIT_STATUS: &str = "\
Exit status:
  0        success (also when stdout's reader went away: `agentcore demo | head -1`)
  1        runtime error (the runtime, the sandbox or a signal watch could not start,
           stdout could not be written; `run --fail-on-error` when a tool call ended
           in an error)
  2        usage error: bad options, an unreadable input or policy file, a session
           that cannot start
  128+N    ended by signal N (SIGTERM 143, SIGINT 130, SIGHUP 129);
           `sandbox exec`: the command's own status, 128+N when a signal killed it";

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run tool calls from JSON Lines (FILE, or stdin for `-` or none) and write events.
    Run(RunArgs),
    /// Run a bundled session in a scratch workspace and show it.
    Demo,
    /// Print the tools' definitions (with `--policy`, the mounted MCP servers' too).
    Tools(ToolsArgs),
    /// Serve the built-in tools over MCP on stdio, or streamable HTTP with `--http`; `mcp login NAME`, `mcp logout NAME` sign in to a mounted server.
    #[command(args_conflicts_with_subcommands = true)]
    Mcp(McpArgs),
    /// The command sandbox: `agentcore sandbox check`, `agentcore sandbox exec -- CMD`.
    #[command(subcommand)]
    Sandbox(SandboxCommand),
    /// Checkpoints of a workspace, also of a session that ended: `ls`, `rewind`.
    #[command(subcommand)]
    Checkpoints(CheckpointsCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Print the manual page (roff): `agentcore man | man -l -`.
    Man,
}

/// `agentcore completions` options.
#[derive(Clone, Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `agentcore sandbox` subcommands.
#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Print what this machine's kernel offers the sandbox and what a
    /// session with these options will enforce.
    Check(SandboxCheckArgs),
    /// Run one command by hand in the sandbox a session with these options
    /// would confine bash in; exits with the command's status. Refuses
    /// (exit 1) when the sandbox cannot confine here: never runs unconfined.
    Exec(SandboxExecArgs),
}

/// `agentcore checkpoints` subcommands.
#[derive(Debug, Subcommand)]
pub enum CheckpointsCommand {
    /// List the checkpoints kept, oldest first, with what each changed.
    Ls(CheckpointsLsArgs),
    /// Show what a rewind would change, as a unified diff per file; nothing is written.
    Diff(CheckpointsDiffArgs),
    /// Put the files back to what they held before a checkpoint, a call or a turn.
    Rewind(CheckpointsRewindArgs),
}

/// Where a workspace's checkpoints are.
#[derive(Clone, Debug, Args)]
pub struct CheckpointStoreArgs {
    /// The workspace root (default: the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// The store, when not the default under the state directory.
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// Print JSON instead of lines.
    #[arg(long)]
    pub json: bool,
}

/// `agentcore checkpoints ls` options.
#[derive(Clone, Debug, Args)]
pub struct CheckpointsLsArgs {
    /// The store.
    #[command(flatten)]
    pub store: CheckpointStoreArgs,
}

/// Where a rewind goes, or what a diff shows: exactly one of `--to`,
/// `--call`, `--turn`.
#[derive(Clone, Debug, Args)]
#[group(required = true, multiple = false)]
pub struct CheckpointTargetArgs {
    /// Before checkpoint N (undoing it and every later one).
    #[arg(long, value_name = "N")]
    pub to: Option<u64>,
    /// Before the call with this id.
    #[arg(long, value_name = "ID")]
    pub call: Option<String>,
    /// Before the first checkpoint of turn T.
    #[arg(long, value_name = "T")]
    pub turn: Option<u64>,
}

/// `agentcore checkpoints rewind` options.
#[derive(Clone, Debug, Args)]
pub struct CheckpointsRewindArgs {
    /// The store.
    #[command(flatten)]
    pub store: CheckpointStoreArgs,
    /// Where to.
    #[command(flatten)]
    pub target: CheckpointTargetArgs,
    /// Leave files something else changed since, and rewind the rest.
    #[arg(long, conflicts_with = "force")]
    pub skip_conflicts: bool,
    /// Rewind files something else changed since too, overwriting them.
    #[arg(long)]
    pub force: bool,
}

/// `agentcore checkpoints diff` options.
#[derive(Clone, Debug, Args)]
pub struct CheckpointsDiffArgs {
    /// The store.
    #[command(flatten)]
    pub store: CheckpointStoreArgs,
    /// The rewind whose changes to show.
    #[command(flatten)]
    pub target: CheckpointTargetArgs,
}

/// `agentcore sandbox check` options.
#[derive(Clone, Debug, Args)]
pub struct SandboxCheckArgs {
    /// Workspace, mode and policy (the policy's `[sandbox]` table).
    #[command(flatten)]
    pub session: SessionArgs,
    /// Also list what each toolchain of `[sandbox] toolchains` adds: its
    /// cache folders (writable) and registry hosts (allowed).
    #[arg(long)]
    pub toolchains: bool,
}

/// `agentcore sandbox exec` options.
#[derive(Clone, Debug, Args)]
pub struct SandboxExecArgs {
    /// Workspace, mode and policy (the policy's `[sandbox]` table).
    #[command(flatten)]
    pub session: SessionArgs,
    /// The command and its arguments, after `--`; run directly, not by a shell.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// Options shared by `run` and `mcp`.
#[derive(Clone, Debug, Args)]
pub struct SessionArgs {
    /// Workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Approval mode (default: the policy's, else default).
    #[arg(long, value_parser = mode_parser())]
    pub mode: Option<Mode>,
    /// Approval policy file (TOML: mode, allow, ask, deny, roots).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Claude Code settings file whose `hooks` run (PreToolUse, PostToolUse, PostToolUseFailure); repeatable.
    #[arg(long = "hooks", value_name = "FILE")]
    pub hooks: Vec<PathBuf>,
    /// The built-in tools the model sees, comma-separated.
    #[arg(long, value_name = "NAMES", value_parser = parse_tools, long_help = tools_help())]
    pub tools: Option<ToolSet>,
}

/// The long help of `--tools`, read from the library's list of built-in
/// tools so that it stays true when one is added.
fn tools_help() -> String {
    let names = |tools: &mut dyn Iterator<Item = Builtin>| {
        tools.map(Builtin::name).collect::<Vec<_>>().join(", ")
    };
    let default = ToolSet::default();
    let all = names(&mut Builtin::ALL.into_iter());
    let by_default = names(&mut default.iter());
    let on_request = names(&mut Builtin::ALL.into_iter().filter(|b| !default.contains(*b)));
    let need_checkpoints = names(&mut Builtin::ALL.into_iter().filter(|b| b.needs_checkpoints()))
        .replace(", ", " and ");
    format!(
        "The built-in tools the model sees, comma-separated, e.g. \
read,grep,glob,ls,edit,multi_edit,write,bash or read,grep,glob,ls,apply_patch,bash; \
default stands for the default tools (default,apply_patch for OpenAI models, default,edit_lines \
for models that fail string edits). The built-in tools: {all}. Default: {by_default} ({on_request} only when named). \
bash_output and kill_shell need bash; {need_checkpoints} need checkpoints on (--checkpoints)."
    )
}

/// `--mode`: the names `Mode`'s `FromStr` accepts, listed in `--help`.
fn mode_parser() -> impl TypedValueParser<Value = Mode> {
    PossibleValuesParser::new(Mode::ALL.map(Mode::as_str)).try_map(|s| s.parse::<Mode>())
}

fn parse_tools(s: &str) -> Result<ToolSet, String> {
    s.parse::<ToolSet>().map_err(|e| e.to_string())
}

/// `agentcore run` options.
#[derive(Clone, Debug, Args)]
pub struct RunArgs {
    /// Input file; stdin when `-` or absent.
    pub file: Option<PathBuf>,
    /// Workspace, mode and policy.
    #[command(flatten)]
    pub session: SessionArgs,
    /// Safe calls that may run side by side.
    #[arg(long, default_value_t = 10)]
    pub max_concurrency: usize,
    /// Consecutive failures that disable a tool (0: never).
    #[arg(long, default_value_t = 3)]
    pub max_tool_errors: u32,
    /// What a steering message does: skip the calls not yet started, or finish the batch.
    #[arg(long, value_enum, default_value_t = Steering::Skip)]
    pub steering: Steering,
    /// Output format (default: pretty on a terminal, jsonl otherwise).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Exit with status 1 when any tool call of the run ended in an error
    /// result (any outcome but success), for CI; the run still goes to the end.
    #[arg(long)]
    pub fail_on_error: bool,
    /// After each turn, write the tool results as the next request needs
    /// them: a `next_request` line holding Anthropic's user message, OpenAI
    /// Chat's tool messages, or the Responses API's input items.
    #[arg(long, value_enum, value_name = "PROVIDER")]
    pub results: Option<Results>,
    /// Record a checkpoint of every call that can write, for `agentcore
    /// checkpoints rewind`, the `{"rewind": …}` input line and the
    /// `checkpoints` and `rewind` tools (docs/checkpoints.md).
    #[arg(long)]
    pub checkpoints: bool,
}

/// `--results` of `run`: the provider whose next request the results are
/// shaped for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Results {
    /// `{"messages": [{"role": "user", "content": [tool_result, …]}]}`.
    Anthropic,
    /// `{"messages": [{"role": "tool", …}, …]}` (Chat Completions).
    Openai,
    /// `{"input": [{"type": "function_call_output", …}, …]}` (Responses API).
    OpenaiResponses,
}

/// `--steering`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Steering {
    /// Skip the calls not yet started.
    Skip,
    /// Let the batch finish.
    Finish,
}

impl From<Steering> for SteeringPolicy {
    fn from(s: Steering) -> Self {
        match s {
            Steering::Skip => SteeringPolicy::SkipPending,
            Steering::Finish => SteeringPolicy::FinishBatch,
        }
    }
}

/// `--format` of `run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One JSON event per line.
    Jsonl,
    /// A line per call, for people.
    Pretty,
}

/// `agentcore tools` options.
#[derive(Clone, Debug, Args)]
pub struct ToolsArgs {
    /// Which shape to print.
    #[arg(long, value_enum, default_value_t = ToolsFormat::Mcp)]
    pub format: ToolsFormat,
    /// Policy file whose `[[mcp_servers]]` are mounted and listed too.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// The built-in tools to print, comma-separated (as `run --tools`).
    #[arg(long, value_name = "NAMES", value_parser = parse_tools, long_help = tools_help())]
    pub tools: Option<ToolSet>,
}

/// The shapes of `agentcore tools`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ToolsFormat {
    /// A `tools/list` result.
    Mcp,
    /// Anthropic Messages `tools`.
    Anthropic,
    /// OpenAI Chat Completions `tools`.
    Openai,
}

/// `agentcore mcp login` and `agentcore mcp logout`.
#[derive(Clone, Debug, Subcommand)]
pub enum McpAction {
    /// Sign in to a `url` server of the policy's [[mcp_servers]] with OAuth in the browser ($BROWSER, else xdg-open; the URL is printed too) and keep its tokens under the user's state directory.
    Login(McpAccountArgs),
    /// Delete the OAuth tokens kept for a server of the policy's [[mcp_servers]].
    Logout(McpAccountArgs),
}

/// The server `agentcore mcp login` and `logout` act on.
#[derive(Clone, Debug, Args)]
pub struct McpAccountArgs {
    /// The server's `name` in its [[mcp_servers]] entry.
    pub name: String,
    /// Policy file whose [[mcp_servers]] has the server.
    #[arg(long, value_name = "FILE")]
    pub policy: PathBuf,
    /// Seconds the sign-in waits for the browser to come back.
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
}

/// `agentcore mcp` options.
#[derive(Clone, Debug, Args)]
pub struct McpArgs {
    /// `login` or `logout` instead of serving.
    #[command(subcommand)]
    pub action: Option<McpAction>,
    /// Workspace, mode and policy.
    #[command(flatten)]
    pub session: SessionArgs,
    /// Seconds a question put to the user through the client (elicitation) may go unanswered before the call is denied.
    #[arg(long, value_name = "SECS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub ask_timeout: u64,
    /// Record a checkpoint of every call that can write, for `agentcore
    /// checkpoints rewind` and the `checkpoints` and `rewind` tools
    /// (docs/checkpoints.md).
    #[arg(long)]
    pub checkpoints: bool,
    /// Serve MCP streamable HTTP at http://ADDR[:PORT]/mcp instead of stdio (port 0: any free one; default port 8080).
    #[arg(long, value_name = "ADDR[:PORT]")]
    pub http: Option<String>,
    /// File holding the bearer token every HTTP request must carry (else AGENTCORE_MCP_TOKEN); required off loopback.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub token_file: Option<PathBuf>,
    /// A browser origin accepted besides loopback ones, e.g. https://app.example.com; repeatable.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    pub allow_origin: Vec<String>,
    /// An HTTP session with no message either way for this long ends (e.g. 90s, 30m, 2h; a bare number is seconds).
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = parse_duration, requires = "http")]
    pub idle_timeout: std::time::Duration,
    /// The most HTTP sessions open at once; a new one beyond it gets 503.
    #[arg(long, value_name = "N", default_value_t = 16, requires = "http")]
    pub max_sessions: usize,
    /// The most HTTP connections open at once; at the cap, a new one closes the one that has waited longest for a request's headers.
    #[arg(long, value_name = "N", default_value_t = agentcore::mcp::http::DEFAULT_MAX_CONNECTIONS, requires = "http")]
    pub max_connections: usize,
    /// The largest HTTP request body accepted, in bytes (413 beyond it).
    #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024 * 1024, requires = "http")]
    pub max_body_bytes: usize,
}

/// `90s`, `30m`, `2h` or a number of seconds; at least one second.
fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let (number, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => s.split_at(at),
        None => (s, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{s:?} is not a duration; write e.g. 90s, 30m or 2h"))?;
    let secs = match unit {
        "s" => Some(n),
        "m" => n.checked_mul(60),
        "h" => n.checked_mul(3600),
        _ => None,
    }
    .filter(|secs| *secs > 0)
    .ok_or_else(|| format!("{s:?} is not a duration of at least 1s; write e.g. 90s, 30m or 2h"))?;
    Ok(std::time::Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use std::time::Duration;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn mcp_login_and_logout_name_a_server_of_a_policy() {
        use clap::Parser;
        let cli =
            Cli::try_parse_from(["agentcore", "mcp", "login", "gh", "--policy", "p.toml"]).unwrap();
        let Command::Mcp(McpArgs {
            action: Some(McpAction::Login(args)),
            ..
        }) = cli.command
        else {
            panic!("not a login");
        };
        assert_eq!((args.name.as_str(), args.timeout), ("gh", 300));
        let cli =
            Cli::try_parse_from(["agentcore", "mcp", "logout", "gh", "--policy", "p"]).unwrap();
        assert!(matches!(
            cli.command,
            Command::Mcp(McpArgs {
                action: Some(McpAction::Logout(_)),
                ..
            })
        ));
        // Serving is still `agentcore mcp` with its options.
        let cli = Cli::try_parse_from(["agentcore", "mcp", "--ask-timeout", "5"]).unwrap();
        assert!(matches!(
            cli.command,
            Command::Mcp(McpArgs { action: None, .. })
        ));
        // The policy is needed to find the server.
        assert!(Cli::try_parse_from(["agentcore", "mcp", "login", "gh"]).is_err());
    }

    #[test]
    fn mode_accepts_every_name_mode_parses_and_lists_them() {
        for mode in Mode::ALL {
            let cli =
                Cli::try_parse_from(["agentcore", "sandbox", "check", "--mode", mode.as_str()])
                    .expect("a mode's own name parses");
            let Command::Sandbox(SandboxCommand::Check(args)) = cli.command else {
                panic!("sandbox check");
            };
            assert_eq!(args.session.mode, Some(mode));
        }
        assert!(Cli::try_parse_from(["agentcore", "run", "--mode", "yolo"]).is_err());
        let help = Cli::command()
            .find_subcommand_mut("run")
            .map(|run| run.render_help().to_string())
            .unwrap_or_default();
        assert!(
            help.contains("default, accept-edits, plan, bypass"),
            "{help}"
        );
    }

    #[test]
    fn tools_help_names_every_built_in_tool() {
        let help = tools_help();
        for tool in Builtin::ALL {
            assert!(help.contains(tool.name()), "{tool} missing from {help}");
        }
    }

    #[test]
    fn durations_read_seconds_minutes_and_hours() {
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        for bad in [
            "",
            "0",
            "0s",
            "m",
            "1d",
            "1.5h",
            "-1",
            "1 m",
            "99999999999999999999h",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
