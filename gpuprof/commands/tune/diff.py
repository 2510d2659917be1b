"""A unified diff of several files that `git apply` and `patch -p1` both take: `a/` and `b/` paths
relative to the folder the diff is applied in, and the "No newline at end of file" marker where a
file's last line has none (difflib leaves that out, and git then refuses the hunk)."""

import difflib

NO_NEWLINE = "\\ No newline at end of file\n"


def unified(path: str, old: str, new: str, context: int = 3) -> str:
    if old == new:
        return ""
    lines = list(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}",
                                      n=context))
    out = [f"diff --git a/{path} b/{path}\n"]
    for line in lines:
        if line.startswith(("---", "+++")) and not line.endswith("\n"):
            line += "\n"
        if not line.endswith("\n"):
            line += "\n" + NO_NEWLINE
        out.append(line)
    return "".join(out)


def several(files) -> str:
    """The diff of each (path, old, new), in order."""
    return "".join(unified(path, old, new) for path, old, new in files)
