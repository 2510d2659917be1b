"""The one error type the CLI turns into a one-line message and exit status 2."""


class UsageProblem(Exception):
    """Bad input from the user: nothing was launched."""
