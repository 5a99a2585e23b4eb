//! The MCP client: external MCP servers' tools mounted into a session's
//! registry, so their calls go through the same pipeline as the built-in
//! tools (coercion against their schema, one validation message, approval
//! rules such as `mcp__github__*`, the breaker, paired events).
//!
//! A session lists the servers in [`SessionConfig::mcp_servers`] or in the
//! policy's `[[mcp_servers]]` tables ([`McpServerConfig`]) and starts with
//! [`Session::connect`]. Each server is started, handshaken (within its
//! startup timeout) and listed at once; its tools join the registry as
//! `mcp__SERVER__TOOL` ([`RemoteTool`]). A server that cannot start is left
//! out and reported ([`Session::mcp_failures`]); the others are unaffected.
//!
//! [`SessionConfig::mcp_servers`]: crate::session::SessionConfig::mcp_servers
//! [`Session::connect`]: crate::session::Session::connect
//! [`Session::mcp_failures`]: crate::session::Session::mcp_failures

mod cap;
mod config;
mod connection;
mod content;
pub mod oauth;
mod search;
mod stdio;
mod tool;

use std::sync::Arc;

use agentcore_stages::Tool;

pub use config::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, McpOAuthConfig, McpServerConfig, sanitize,
};
pub use connection::Connection;
pub use oauth::SignIn;
pub use search::{
    Catalog, TOOL_SEARCH, ToolSearchArgs, ToolSearchConfig, ToolSearchTool, definition_tokens,
};
pub use tool::RemoteTool;

/// A server that could not be mounted, or a tool of it that could not be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountFailure {
    /// The server's name as configured.
    pub server: String,
    /// Why, as a sentence naming the server.
    pub message: String,
}

impl std::fmt::Display for MountFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// What mounting a session's servers gave: the tools to register, the live
/// connections, and what failed.
#[derive(Default)]
pub struct Mounted {
    /// One tool per remote tool of every server that started.
    pub tools: Vec<Arc<dyn Tool>>,
    /// The servers that started.
    pub connections: Vec<Arc<Connection>>,
    /// Servers (or single tools) that could not be mounted.
    pub failures: Vec<MountFailure>,
    /// What `tool_search` searches, once the tools are listed by summary
    /// only ([`Mounted::list_by_summary`]).
    catalog: Option<Catalog>,
}

impl std::fmt::Debug for Mounted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mounted")
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .field("failures", &self.failures)
            .finish_non_exhaustive()
    }
}

/// Starts every server in `servers` side by side and lists its tools. A
/// server that fails is reported in [`Mounted::failures`]; two entries with
/// the same (sanitised) name keep the first.
pub async fn mount(servers: &[McpServerConfig]) -> Mounted {
    mount_with(servers, None).await
}

/// [`mount`], with a person who can sign in to `url` servers that ask for
/// it (OAuth, [`SignIn`]); without one, such a server fails its mount
/// with the command that signs in.
pub async fn mount_with(servers: &[McpServerConfig], sign_in: Option<SignIn>) -> Mounted {
    let mut mounted = Mounted::default();
    let mut seen = std::collections::BTreeSet::new();
    let mut starting = Vec::new();
    for config in servers {
        if let Err(message) = config.check() {
            mounted.failures.push(MountFailure {
                server: config.name.clone(),
                message,
            });
            continue;
        }
        if !seen.insert(sanitize(&config.name)) {
            mounted.failures.push(MountFailure {
                server: config.name.clone(),
                message: format!(
                    "MCP server {:?} is configured twice (names are compared after replacing characters outside [A-Za-z0-9_-] with `_`); the first entry is used, rename the other",
                    config.name
                ),
            });
            continue;
        }
        starting.push(Connection::start(config.clone(), sign_in.clone()));
    }
    for started in futures::future::join_all(starting).await {
        match started {
            Ok((connection, tools)) => {
                let (tools, failures) = tool::remote_tools(&connection, tools);
                mounted.tools.extend(tools);
                mounted.failures.extend(failures);
                mounted.connections.push(connection);
            }
            Err(failure) => mounted.failures.push(failure),
        }
    }
    mounted
}

impl Mounted {
    /// Adds the mounted tools to `registry`; a tool that cannot be
    /// registered (its name is taken, its schema does not compile) is left
    /// out and reported in [`Mounted::failures`].
    pub fn register_into(&mut self, registry: &mut agentcore_stages::ToolRegistry) {
        for tool in std::mem::take(&mut self.tools) {
            let name = tool.name().to_owned();
            if let Err(err) = registry.register(tool.clone()) {
                let server = self
                    .connections
                    .iter()
                    .find(|c| name.starts_with(&c.config().tool_prefix()))
                    .map(|c| c.name().to_owned())
                    .unwrap_or_default();
                self.failures.push(MountFailure {
                    message: format!(
                        "the tool {name:?} of MCP server {server:?} is left out: {err}"
                    ),
                    server,
                });
                continue;
            }
            self.tools.push(tool);
        }
    }

    /// Lists the mounted tools by summary only when their full definitions
    /// take more tokens than `config` allows ([`definition_tokens`]): the
    /// `tool_search` tool to register beside them, or `None` when they fit.
    /// Call it after [`Mounted::register_into`]: the tools left out there
    /// are not searched.
    pub fn list_by_summary(&mut self, config: &ToolSearchConfig) -> Option<ToolSearchTool> {
        let tokens: u64 = self
            .tools
            .iter()
            .map(|t| definition_tokens(t.as_ref()))
            .sum();
        if !config.lists_by_summary(tokens) {
            return None;
        }
        for connection in &self.connections {
            connection.list_by_summary(true);
        }
        let catalog = Catalog::default();
        catalog.set(self.tools.clone());
        self.catalog = Some(catalog.clone());
        Some(ToolSearchTool::new(catalog))
    }

    /// The registry `registry` with the tools of every server whose tool
    /// list changed since it was last listed replaced by its new list;
    /// `None` when no list changed. Tools that cannot be registered are
    /// left out and returned.
    pub(crate) async fn refreshed(
        &self,
        registry: &agentcore_stages::ToolRegistry,
    ) -> Option<(agentcore_stages::ToolRegistry, Vec<MountFailure>)> {
        let mut changed = Vec::new();
        for connection in &self.connections {
            if let Some(tools) = connection.changed_tools().await {
                changed.push((connection.clone(), tools));
            }
        }
        if changed.is_empty() {
            return None;
        }
        let mut fresh = agentcore_stages::ToolRegistry::new();
        let mut failures = Vec::new();
        for kept in registry.iter() {
            let owner = self.owner_of(kept.name());
            if owner.is_some_and(|owner| changed.iter().any(|(c, _)| c.name() == owner)) {
                continue;
            }
            // Registered once already, so it registers again.
            let _ = fresh.register(kept.tool().clone());
        }
        for (connection, tools) in changed {
            let (tools, mut left_out) = tool::remote_tools(&connection, tools);
            failures.append(&mut left_out);
            for tool in tools {
                let name = tool.name().to_owned();
                if let Err(err) = fresh.register(tool) {
                    failures.push(MountFailure {
                        server: connection.name().to_owned(),
                        message: format!(
                            "the tool {name:?} of MCP server {:?} is left out: {err}",
                            connection.name()
                        ),
                    });
                }
            }
        }
        // The search sees the tools as they are now.
        if let Some(catalog) = &self.catalog {
            catalog.set(
                fresh
                    .iter()
                    .filter(|t| self.owner_of(t.name()).is_some())
                    .map(|t| t.tool().clone())
                    .collect(),
            );
        }
        Some((fresh, failures))
    }

    /// The server a mounted tool's name belongs to: the one with the
    /// longest `mcp__SERVER__` prefix of it (server names may hold `__`).
    fn owner_of(&self, tool: &str) -> Option<&str> {
        self.connections
            .iter()
            .map(|c| (c.config().tool_prefix(), c.name()))
            .filter(|(prefix, _)| tool.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, name)| name)
    }

    /// Closes every connection (the servers' processes are stopped).
    pub async fn close(&self) {
        futures::future::join_all(self.connections.iter().map(|c| c.close())).await;
    }
}
