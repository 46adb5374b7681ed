"""Errors and exit codes shared by the command line and the desktop app (one small
module both import, so that neither imports the other for them)."""

from __future__ import annotations

EXIT_INPUT = 2
"""Bad input: a usage error, a bad scenario, an inadmissible step."""
EXIT_FAILED = 1
"""The run started but failed (blow-up, solver failure); the last good state is kept."""
EXIT_INTERRUPTED = 130
"""Interrupted by the user (Ctrl-C)."""


class UsageError(Exception):
    """Bad command-line input (exit code 2); the message is one line."""
