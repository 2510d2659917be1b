"""Samplers: run in the supervisor, never in the user's processes."""
