//! `[[mcp_servers]]`: which external MCP servers a session mounts.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How long a server has to answer `initialize` unless its entry says
/// otherwise.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a call may go without an answer or a progress notification
/// unless its entry says otherwise.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(600);

/// One external MCP server to mount, from the policy file:
///
/// ```toml
/// [[mcp_servers]]
/// name = "github"                       # tools become mcp__github__TOOL
/// command = "github-mcp-server"         # started with stdin/stdout as the transport
/// args = ["stdio"]
/// env = { GITHUB_TOKEN = "…" }          # added to agentcore's environment
/// startup_timeout_secs = 30             # default 30
/// call_timeout_secs = 600               # silence allowed in a call (progress resets it); default 600
/// ```
///
/// Or a streamable-HTTP server: `https://` (rustls; the platform's roots,
/// plus those of `ca_file`; the certificate must name the host), or plain
/// `http://` to a loopback address (any host with `allow_insecure`):
///
/// ```toml
/// [[mcp_servers]]
/// name = "remote"
/// url = "https://mcp.example.com/mcp"
/// headers = { Authorization = "Bearer …" }   # sent on every request
/// ca_file = "/etc/company/root-ca.pem"       # a private CA, trusted besides the platform's
/// ```
///
/// A `url` server that answers 401 is signed in to with OAuth 2.1
/// (`agentcore mcp login NAME`, see docs/mcp.md); `oauth` gives a client
/// the authorization server registered beforehand, or the URL of the
/// client's metadata document:
///
/// ```toml
/// oauth = { client_id = "…", client_secret = "…" }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// The server's name; its tools are `mcp__NAME__TOOL`, with characters
    /// outside `[A-Za-z0-9_-]` replaced by `_`.
    pub name: String,
    /// The program to start (looked up on `PATH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment variables set for it, over agentcore's own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// A streamable-HTTP endpoint instead of a command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// HTTP headers for `url`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// PEM certificates trusted as roots for an `https://` `url`, besides
    /// the platform's (a company's own CA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<std::path::PathBuf>,
    /// Allows plain `http://` to a host that is not a loopback address
    /// (what is sent, tokens included, can be read on the way).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_insecure: bool,
    /// How agentcore identifies itself to the server's OAuth authorization
    /// server (default: dynamic client registration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<McpOAuthConfig>,
    /// The policy file the entry was read from ([`Policy::load`] sets it;
    /// not a key of the file): messages name it in the sign-in command.
    ///
    /// [`Policy::load`]: crate::config::Policy::load
    #[serde(skip)]
    pub policy_file: Option<std::path::PathBuf>,
    /// Seconds the server has to complete the MCP handshake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout_secs: Option<f64>,
    /// Seconds a call may go without an answer or progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_timeout_secs: Option<f64>,
}

/// `oauth = { … }` of a `url` server: the OAuth client agentcore signs in
/// as. Without it, agentcore registers itself (RFC 7591) where the
/// authorization server offers that.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpOAuthConfig {
    /// A client id registered with the authorization server beforehand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Its secret, when the registration has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The `https://` URL of a client-id metadata document describing
    /// agentcore, used as the client id when the authorization server
    /// says it supports them (`client_id_metadata_document_supported`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// Machine to machine: tokens from the `client_credentials` grant
    /// with `client_id` and `client_secret` (SEP-1046), no person and no
    /// browser.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub client_credentials: bool,
}

impl McpServerConfig {
    /// A server started as `command args…`.
    pub fn command<I, S>(name: impl Into<String>, command: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            name: name.into(),
            command: Some(command.into()),
            args: args.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// The handshake timeout.
    pub fn startup_timeout(&self) -> Duration {
        seconds(self.startup_timeout_secs).unwrap_or(DEFAULT_STARTUP_TIMEOUT)
    }

    /// The call silence timeout.
    pub fn call_timeout(&self) -> Duration {
        seconds(self.call_timeout_secs).unwrap_or(DEFAULT_CALL_TIMEOUT)
    }

    /// The name as it appears in tool names.
    pub fn tool_prefix(&self) -> String {
        format!("mcp__{}__", sanitize(&self.name))
    }

    /// Whether the entry is usable, as a sentence with the fix when not.
    pub fn check(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err(
                "an [[mcp_servers]] entry has no name; give each one `name = \"…\"`".to_owned(),
            );
        }
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => Err(format!(
                "MCP server {:?} has both `command` and `url`; keep one of them",
                self.name
            )),
            (None, None) => Err(format!(
                "MCP server {:?} has neither `command` nor `url`; give the program to start as `command`",
                self.name
            )),
            (Some(_), None) if self.oauth.is_some() => Err(format!(
                "MCP server {:?} has `oauth` but no `url`; OAuth is for servers reached by URL, so remove `oauth`",
                self.name
            )),
            (None, Some(url)) => self.check_url(url),
            (Some(command), None) if command.trim().is_empty() => Err(format!(
                "MCP server {:?} has an empty `command`; give the program to start",
                self.name
            )),
            (Some(_), None) => Ok(()),
        }
    }
}

impl McpServerConfig {
    /// An `https://` URL, or an `http://` one to a loopback address (to
    /// any host with `allow_insecure`); `ca_file` only beside `https://`.
    fn check_url(&self, url: &str) -> Result<(), String> {
        let name = &self.name;
        let parsed = http::Uri::try_from(url.as_bytes()).ok().filter(|u| {
            u.host().is_some_and(|h| !h.is_empty())
                && matches!(u.scheme_str(), Some("http" | "https"))
        });
        let Some(parsed) = parsed else {
            return Err(format!(
                "MCP server {name:?}: `url` {url:?} is not an https:// or http:// URL with a host; write e.g. \"https://mcp.example.com/mcp\""
            ));
        };
        let host = parsed.host().unwrap_or_default();
        if parsed.scheme_str() == Some("http") {
            if self.ca_file.is_some() {
                return Err(format!(
                    "MCP server {name:?}: `ca_file` is for https:// servers, and `url` {url:?} is plain http://; use https:// or leave `ca_file` out"
                ));
            }
            if !is_loopback(host) && !self.allow_insecure {
                return Err(format!(
                    "MCP server {name:?}: `url` {url:?} is plain http:// to {host}, which is not this machine: what is sent (tokens too) could be read or changed on the way. Use https://, or set `allow_insecure = true` in its entry if the network is yours"
                ));
            }
        }
        if let Some(oauth) = &self.oauth {
            if oauth.client_secret.is_some() && oauth.client_id.is_none() {
                return Err(format!(
                    "MCP server {name:?}: `oauth` has a `client_secret` but no `client_id`; give the client id it belongs to"
                ));
            }
            if oauth.client_credentials
                && (oauth.client_id.is_none() || oauth.client_secret.is_none())
            {
                return Err(format!(
                    "MCP server {name:?}: `oauth.client_credentials` needs the `client_id` and `client_secret` the authorization server issued; give both"
                ));
            }
            if let Some(document) = &oauth.client_metadata_url
                && !(document.starts_with("https://") && document.len() > "https://".len())
            {
                return Err(format!(
                    "MCP server {name:?}: `oauth.client_metadata_url` {document:?} is not an https:// URL; a client-id metadata document must be served over https://"
                ));
            }
        }
        Ok(())
    }
}

/// Whether `host` (as a URL writes it) is this machine: `localhost`, an
/// address of 127.0.0.0/8 or `[::1]`.
fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn seconds(value: Option<f64>) -> Option<Duration> {
    value
        .filter(|s| s.is_finite() && *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
}

/// A name as Claude Code puts it in tool names: every character outside
/// `[A-Za-z0-9_-]` becomes `_`.
///
/// ```
/// assert_eq!(agentcore::mcp::client::sanitize("my server.v2"), "my_server_v2");
/// ```
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised_like_claude_code() {
        assert_eq!(sanitize("github"), "github");
        assert_eq!(sanitize("a.b c/d"), "a_b_c_d");
        assert_eq!(sanitize("é"), "_");
        let config = McpServerConfig::command("my srv", "x", ["y"]);
        assert_eq!(config.tool_prefix(), "mcp__my_srv__");
    }

    #[test]
    fn entries_without_a_way_to_start_are_refused_with_the_fix() {
        let mut config = McpServerConfig {
            name: "gh".into(),
            ..McpServerConfig::default()
        };
        assert!(
            config
                .check()
                .unwrap_err()
                .contains("neither `command` nor `url`")
        );
        config.url = Some("http://localhost:1/mcp".into());
        assert!(config.check().is_ok());
        config.url = Some("https://mcp.example.com/mcp".into());
        assert!(config.check().is_ok());
        config.url = Some("localhost:1/mcp".into());
        assert!(
            config
                .check()
                .unwrap_err()
                .contains("not an https:// or http:// URL with a host")
        );
        config.url = Some("ftp://localhost/mcp".into());
        assert!(config.check().unwrap_err().contains("not an https://"));
        config.command = Some("x".into());
        assert!(config.check().unwrap_err().contains("both"));
        config.url = None;
        assert!(config.check().is_ok());
    }

    #[test]
    fn plain_http_reaches_only_this_machine_unless_allowed() {
        let mut config = McpServerConfig {
            name: "r".into(),
            ..McpServerConfig::default()
        };
        for url in [
            "http://localhost:8080/mcp",
            "http://127.0.0.1/mcp",
            "http://127.3.4.5:1/mcp",
            "http://[::1]:9/mcp",
        ] {
            config.url = Some(url.into());
            assert!(config.check().is_ok(), "{url}");
        }
        for url in [
            "http://agentcore-alice:8080/mcp",
            "http://10.0.0.2/mcp",
            "http://localhost.example.com/mcp",
            "http://[::2]/mcp",
        ] {
            config.url = Some(url.into());
            let err = config.check().unwrap_err();
            assert!(err.contains("which is not this machine"), "{url}: {err}");
            assert!(err.contains("allow_insecure = true"), "{err}");
        }
        config.allow_insecure = true;
        assert!(config.check().is_ok());
        config.ca_file = Some("/ca.pem".into());
        assert!(
            config
                .check()
                .unwrap_err()
                .contains("`ca_file` is for https://")
        );
        config.url = Some("https://mcp.example.com/mcp".into());
        assert!(config.check().is_ok());
    }

    #[test]
    fn oauth_settings_are_checked_with_the_fix() {
        let mut config = McpServerConfig::command("a", "b", Vec::<String>::new());
        config.oauth = Some(McpOAuthConfig::default());
        assert!(config.check().unwrap_err().contains("remove `oauth`"));
        config.command = None;
        config.url = Some("https://mcp.example.com/mcp".into());
        assert!(config.check().is_ok());
        config.oauth = Some(McpOAuthConfig {
            client_secret: Some("s".into()),
            ..McpOAuthConfig::default()
        });
        assert!(config.check().unwrap_err().contains("no `client_id`"));
        config.oauth = Some(McpOAuthConfig {
            client_metadata_url: Some("http://example.com/client.json".into()),
            ..McpOAuthConfig::default()
        });
        assert!(config.check().unwrap_err().contains("not an https:// URL"));
        config.oauth = Some(McpOAuthConfig {
            client_id: Some("id".into()),
            client_credentials: true,
            ..McpOAuthConfig::default()
        });
        assert!(config.check().unwrap_err().contains("give both"));
        let parsed: McpServerConfig = toml::from_str(
            "name = \"x\"\nurl = \"https://h/mcp\"\noauth = { client_id = \"id\", client_secret = \"s\" }\n",
        )
        .unwrap();
        assert_eq!(parsed.oauth.unwrap().client_id.as_deref(), Some("id"));
        assert!(
            toml::from_str::<McpServerConfig>(
                "name = \"x\"\nurl = \"https://h/mcp\"\noauth = { client = \"id\" }\n"
            )
            .is_err()
        );
    }

    #[test]
    fn timeouts_default_and_ignore_nonsense() {
        let mut config = McpServerConfig::command("a", "b", Vec::<String>::new());
        assert_eq!(config.startup_timeout(), DEFAULT_STARTUP_TIMEOUT);
        config.startup_timeout_secs = Some(-1.0);
        assert_eq!(config.startup_timeout(), DEFAULT_STARTUP_TIMEOUT);
        config.startup_timeout_secs = Some(0.5);
        assert_eq!(config.startup_timeout(), Duration::from_millis(500));
        config.call_timeout_secs = Some(f64::NAN);
        assert_eq!(config.call_timeout(), DEFAULT_CALL_TIMEOUT);
    }
}
