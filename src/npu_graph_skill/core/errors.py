"""Errors a user can act on. Faces print their one-line message and exit 2; never a traceback."""


class UserError(Exception):
    """Bad usage or unreadable input: the message is one line that says what to do."""

    exit_code = 2


class InputError(UserError):
    """A path or stream that cannot be read as text."""
