"""Whether the files tune would write are safe to change: `--apply` refuses a git tree with
uncommitted changes (the patch must be one `git diff` the user can read and undo), unless --force."""

import os

from gpuprof.record.provenance import run_git

GIT_TIMEOUT_S = 30          # a large work tree's status takes longer than a run's provenance may


def _git(folder: str, *args):
    return run_git(folder, *args, timeout=GIT_TIMEOUT_S)


def toplevel(path: str):
    """The work tree that holds `path` (a file or folder), or None outside git."""
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    out = _git(folder, "rev-parse", "--show-toplevel")
    return os.path.realpath(out.strip()) if out and out.strip() else None


def uncommitted(paths) -> list:
    """`toplevel: what` for each work tree holding one of `paths` with changes git could not undo:
    tracked files modified or staged anywhere in it, or one of `paths` untracked."""
    out = []
    by_tree = {}
    for path in paths:
        tree = toplevel(path)
        if tree is not None:
            by_tree.setdefault(tree, []).append(os.path.realpath(path))
    for tree, mine in sorted(by_tree.items()):
        changed = [line[3:] for line in (_git(tree, "status", "--porcelain", "--untracked-files=no") or "").splitlines()
                   if line.strip()]
        untracked = [os.path.relpath(p, tree) for p in mine if os.path.isfile(p)
                     and _git(tree, "ls-files", "--error-unmatch", os.path.relpath(p, tree)) is None]
        if changed or untracked:
            listed = changed[:3] + [f"{name} (untracked)" for name in untracked[:2]]
            more = len(changed) + len(untracked) - len(listed)
            out.append(f"{tree}: {', '.join(listed)}" + (f" and {more} more" if more > 0 else ""))
    return out
