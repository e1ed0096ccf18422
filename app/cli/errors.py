"""Errors of the command-line client: each one is printed as one line on stderr with its exit code."""

from __future__ import annotations

# Exit codes (click itself uses 2 for usage errors).
EXIT_FAILED = 1  # the service refused a request, or some documents failed
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3  # no connection to the service
EXIT_AUTH = 4  # the service refused the API key (401/403)


class CliError(Exception):
    """A failure to report to the user: `message` is one line, `exit_code` the process's exit status."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.message = " ".join(message.split())  # one line, whatever the service sent
        self.exit_code = exit_code
