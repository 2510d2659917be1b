"""Launching the user's job: the command, the bootstrap environment, the supervisor."""
