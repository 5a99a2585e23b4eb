//! `agentcore completions SHELL` and `agentcore man`: the command line
//! described for a shell's completion and for `man`, both generated from
//! the same definition as `--help` (`args::Cli`).

use std::process::ExitCode;

use clap::CommandFactory;

use super::args::Cli;
use super::out::{self, errln};

/// Prints the completion script for `shell` (bash, zsh, fish, elvish,
/// powershell).
pub fn completions(shell: clap_complete::Shell) -> ExitCode {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "agentcore", &mut script);
    write(&script)
}

/// Prints the manual page, in roff (`agentcore man | man -l -`).
pub fn man() -> ExitCode {
    let mut page = Vec::new();
    if let Err(err) = clap_mangen::Man::new(Cli::command()).render(&mut page) {
        errln!("agentcore man: cannot render the page: {err}");
        return ExitCode::from(1);
    }
    write(&page)
}

/// Writes `bytes` to stdout; a reader that went away is a quiet end.
fn write(bytes: &[u8]) -> ExitCode {
    out::write_with(|stdout| stdout.write_all(bytes));
    ExitCode::SUCCESS
}
