"""Markdown's escaping and code spans, shared by every renderer that writes Markdown (the report,
its efficiency table, compare)."""

import re

_MARKUP = re.compile(r"([\\`*_{}\[\]<>|~])")


def escape(text) -> str:
    """Plain text that GitHub-flavoured Markdown shows as written."""
    return _MARKUP.sub(r"\\\1", str(text or ""))


def code(text) -> str:
    """An inline code span that survives backticks in the text."""
    text = str(text or "")
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}" if fence == "``" else f"`{text}`"
