//! What a call touches: [`Capability`], [`Access`], and the [`Permissions`]
//! extension a tool carries so the engine can compute them.
//!
//! The kernel never sees any of this: a tool puts a [`Permissions`] value in
//! its typed extensions ([`Tool::extensions`](crate::Tool::extensions)), and
//! the approval engine looks it up there. A tool without one is treated as
//! running commands of an unknown kind (fail closed: it asks in the default
//! mode).

use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{Extensions, Tool};

/// The kind of side effect a call has, from least to most dangerous.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    /// Reads files or lists directories.
    Read,
    /// Creates or changes files.
    Write,
    /// Runs commands (or does something the engine cannot see into).
    Exec,
}

impl Capability {
    /// `"read"`, `"write"` or `"exec"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Capability::Read => "read",
            Capability::Write => "write",
            Capability::Exec => "exec",
        }
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one call touches, computed from its coerced, validated arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// The kind of side effect.
    pub capability: Capability,
    /// Files or directories the call names, as the model gave them
    /// (workspace-relative or absolute). For a search (glob, grep, ls) this
    /// is the directory the search is rooted at.
    pub paths: Vec<String>,
    /// The shell command the call runs, if it runs one.
    pub command: Option<String>,
    /// False when the tool carries no [`Permissions`]: the engine knows
    /// nothing of what it does.
    pub described: bool,
    /// Whether the command runs confined by the session's sandbox, which
    /// lets the engine allow it without asking (`auto_allow`).
    pub containment: Containment,
    /// Whether the command runs in a terminal session the model types
    /// into (`bash` with `tty`): it then runs whatever is typed, which no
    /// rule can see, so no allow rule short of a bare one covers it and a
    /// deny rule on commands makes it ask.
    pub terminal: bool,
}

/// How the command of a call runs: with the user's full authority, or
/// confined by the session's [`Sandbox`](crate::sandbox::Sandbox).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Containment {
    /// With the user's authority (no sandbox, or one that cannot confine
    /// the command fully): judged by the rules and the mode.
    #[default]
    Unconfined,
    /// Fully confined: writes only under the writable roots, no network
    /// unless the policy opens it, nothing left running. With `auto_allow`
    /// it needs no approval in the `default` and `accept-edits` modes.
    Sandboxed,
    /// The call asks to run outside the sandbox
    /// (`dangerously_disable_sandbox`): it always needs the user's approval
    /// unless the policy's `allow_unsandboxed` (never `allow`) or a session
    /// grant given for an unconfined run names it. The reason the model
    /// gave, if any.
    SandboxDisabled {
        /// Why the model asks, shown to the person.
        reason: Option<String>,
    },
}

impl Access {
    /// A read of `paths`.
    pub fn read<I, S>(paths: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::paths(Capability::Read, paths)
    }

    /// A write of `paths`.
    pub fn write<I, S>(paths: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::paths(Capability::Write, paths)
    }

    /// A shell command.
    pub fn command(command: impl Into<String>) -> Self {
        Self {
            capability: Capability::Exec,
            paths: Vec::new(),
            command: Some(command.into()),
            described: true,
            containment: Containment::Unconfined,
            terminal: false,
        }
    }

    /// This access, run fully confined by the sandbox.
    #[must_use]
    pub fn sandboxed(mut self) -> Self {
        self.containment = Containment::Sandboxed;
        self
    }

    /// This command, run in a terminal session the model types into.
    #[must_use]
    pub fn in_terminal(mut self) -> Self {
        self.terminal = true;
        self
    }

    /// This access, asking to run outside the sandbox for `reason`.
    #[must_use]
    pub fn outside_sandbox(mut self, reason: Option<String>) -> Self {
        self.containment = Containment::SandboxDisabled { reason };
        self
    }

    /// A call that touches no file and runs nothing, such as a pure
    /// computation: a read of no paths. It is judged as a read: allowed
    /// without asking in every mode, unless a rule about reads (`deny =
    /// ["read"]`, `ask = ["read"]`) or about the tool by name says
    /// otherwise.
    pub fn nothing() -> Self {
        Self::read(std::iter::empty::<String>())
    }

    /// What a tool without [`Permissions`] is taken to do: run something
    /// the engine cannot see into.
    pub fn unknown() -> Self {
        Self {
            capability: Capability::Exec,
            paths: Vec::new(),
            command: None,
            described: false,
            containment: Containment::Unconfined,
            terminal: false,
        }
    }

    fn paths<I, S>(capability: Capability, paths: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            capability,
            paths: paths.into_iter().map(Into::into).collect(),
            command: None,
            described: true,
            containment: Containment::Unconfined,
            terminal: false,
        }
    }
}

type Describe = dyn Fn(&Value) -> Access + Send + Sync;

/// Permission metadata a tool carries in its typed extensions: a function
/// from the call's coerced, validated arguments to the [`Access`] it needs.
///
/// Cheap to clone. Attach it once, where the tool builds its extensions
/// (a typed tool: [`Permissions::typed`], as every built-in tool does in
/// its own file, e.g. [`tools::write::permissions`]):
///
/// ```
/// use agentcore::access::{Access, Permissions};
///
/// let permissions = Permissions::new(|args| {
///     Access::write([args["target"].as_str().unwrap_or_default()])
/// });
/// let extensions = permissions.into_extensions();
/// assert!(extensions.get::<Permissions>().is_some());
/// // A built-in tool's:
/// let write = agentcore::tools::write::permissions();
/// # let _ = write;
/// ```
///
/// [`tools::write::permissions`]: crate::tools::write::permissions
#[derive(Clone)]
pub struct Permissions {
    describe: Arc<Describe>,
}

impl Permissions {
    /// Permissions computed by `describe` from the call's arguments.
    pub fn new<F>(describe: F) -> Self
    where
        F: Fn(&Value) -> Access + Send + Sync + 'static,
    {
        Self {
            describe: Arc::new(describe),
        }
    }

    /// Permissions computed by `describe` from the call's arguments read as
    /// `A`, the arguments type of a [`TypedTool`](crate::TypedTool). Arguments
    /// that do not read as `A` are described as [`Access::unknown`]: the
    /// engine knows nothing of such a call and asks (fail closed).
    ///
    /// ```
    /// use agentcore::access::{Access, Permissions};
    /// use serde::Deserialize;
    /// use serde_json::json;
    ///
    /// #[derive(Deserialize)]
    /// struct PublishArgs { target: String }
    ///
    /// let permissions = Permissions::typed(|args: &PublishArgs| Access::write([args.target.as_str()]));
    /// assert_eq!(permissions.describe(&json!({"target": "site/"})).paths, ["site/"]);
    /// assert!(!permissions.describe(&json!({"target": 3})).described);
    /// ```
    pub fn typed<A, F>(describe: F) -> Self
    where
        A: DeserializeOwned,
        F: Fn(&A) -> Access + Send + Sync + 'static,
    {
        Self::new(move |args| match A::deserialize(args) {
            Ok(args) => describe(&args),
            Err(_) => Access::unknown(),
        })
    }

    /// These permissions as a tool's extensions, for
    /// [`TypedTool::extensions`](crate::TypedTool::extensions) or
    /// [`Tool::extensions`](crate::Tool::extensions).
    pub fn into_extensions(self) -> Extensions {
        let mut extensions = Extensions::new();
        extensions.insert(self);
        extensions
    }

    /// What a call with `args` touches.
    pub fn describe(&self, args: &Value) -> Access {
        (self.describe)(args)
    }

    /// What a call of `tool` with `args` touches: from the tool's
    /// [`Permissions`] extension, or [`Access::unknown`] without one.
    pub fn of(tool: &dyn Tool, args: &Value) -> Access {
        match tool.extensions().get::<Permissions>() {
            Some(permissions) => permissions.describe(args),
            None => Access::unknown(),
        }
    }
}

impl fmt::Debug for Permissions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permissions").finish_non_exhaustive()
    }
}
