"""The best combination written where it lives in the user's files: DataLoader arguments in the call
at the report's `file:line` (gpuprof.commands.tune.loader_edit), the process settings after the script's
`import torch` (gpuprof.commands.tune.script_edit), as one diff (gpuprof.commands.tune.diff) that applies in the git
work tree (else the files' common folder). What code cannot carry is said: the thread count as an
environment variable on the command line where no script file was found, and the rest as lines to
change by hand, in the words of the fix that makes the change."""

import os
import shlex
from typing import NamedTuple, Optional

from gpuprof.advise import fixes
from gpuprof.advise.keeping import keep_line
from gpuprof.record import changes
from gpuprof.commands.tune import diff, git_tree
from gpuprof.commands.tune.loader_edit import REMOVE, EditError, edit_loader_call
from gpuprof.commands.tune.script_edit import edit_script

PROCESS_KEYS = ("torch_threads", "cudnn_benchmark", "allow_tf32")


class FileChange(NamedTuple):
    path: str           # absolute
    shown: str          # relative to the patch's root
    old: str
    new: str


class Patch(NamedTuple):
    root: str                    # the folder the diff applies in
    files: list                  # FileChange, in order
    by_hand: list                # lines the user changes themself
    command_line: Optional[str]  # the command with what only the environment can carry, or None

    @property
    def text(self) -> str:
        return diff.several((f.shown, f.old, f.new) for f in self.files)


def build(best: dict, facts, report: dict, command, cwd: str) -> Patch:
    """The patch that keeps `best` (a combination relative to the program as it is)."""
    edits, by_hand, env = {}, [], {}
    loader_settings = {k: v for k, v in best.items() if k in changes.LOADER_KEYS}
    if "num_workers" in best and not best["num_workers"]:
        loader_settings.update(prefetch_factor=REMOVE, persistent_workers=REMOVE)
    where = (facts.loader or {}).get("where")
    framework = (facts.loader or {}).get("framework")
    if loader_settings:
        _edit_loader(edits, by_hand, where, loader_settings, framework, cwd)
    process = {k: v for k, v in best.items() if k in PROCESS_KEYS}
    script = script_file(command, cwd)
    if process and script is not None:
        try:
            edits[script] = edit_script(_text(edits, script), process)
        except (EditError, OSError) as exc:
            by_hand.append(f"{script}: {exc}; set {changes.label(process)} in the training process")
    elif "torch_threads" in process:
        env["OMP_NUM_THREADS"] = str(process["torch_threads"])
    if script is None:
        by_hand += [f"{k}={v}: no script file to write it in; set it after `import torch`" for k, v in process.items()
                    if k != "torch_threads"]
    for key in best:
        if key not in changes.LOADER_KEYS and key not in PROCESS_KEYS:
            owner = fixes.owner_of({key: best[key]})
            line = keep_line({key: best[key]}, owner.id if owner else None, where, framework)
            by_hand.append(line or f"{changes.label({key: best[key]})}: a code change in the training loop")
    return _patch(edits, by_hand, env, command, cwd)


def _edit_loader(edits, by_hand, where, settings, framework, cwd) -> None:
    path, line = _place(where, cwd)
    shown = {k: v for k, v in settings.items() if v != REMOVE}
    if path is None or _installed(path):
        by_hand.append(keep_line(shown, None, where, framework) or f"set {changes.label(shown)} where the "
                       "DataLoader is built")
        return
    try:
        edit = edit_loader_call(_text(edits, path), line, settings)
    except (EditError, OSError, UnicodeDecodeError) as exc:
        by_hand.append(f"{where}: {exc}; " + (keep_line(shown, None, where, framework) or changes.label(shown)))
        return
    edits[path] = edit.source
    by_hand.extend(f"at {where}: {text}" for text in edit.by_hand)


def _patch(edits: dict, by_hand: list, env: dict, command, cwd: str) -> Patch:
    paths = sorted(edits)
    root = _root(paths, cwd)
    files = [FileChange(p, os.path.relpath(p, root), _read(p), edits[p]) for p in paths if _read(p) != edits[p]]
    command_line = None
    if env:
        command_line = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " " + \
            " ".join(shlex.quote(str(word)) for word in _shown_argv(command))
    return Patch(root, files, by_hand, command_line)


def _root(paths: list, cwd: str) -> str:
    """The git work tree holding every path, else their common folder (the cwd when none)."""
    if not paths:
        return cwd
    tree = git_tree.toplevel(paths[0])
    if tree and all(os.path.realpath(p).startswith(tree + os.sep) for p in paths):
        return tree
    return os.path.dirname(os.path.commonpath([os.path.realpath(p) for p in paths]) + os.sep) if len(paths) > 1 \
        else os.path.dirname(os.path.realpath(paths[0]))


def _place(where, cwd: str):
    """(absolute path, line) of a `file:line`, or (None, None)."""
    if not where or ":" not in str(where):
        return None, None
    path, _, line = str(where).rpartition(":")
    if not line.isdigit():
        return None, None
    full = os.path.realpath(os.path.join(cwd, path))
    return (full, int(line)) if os.path.isfile(full) else (None, None)


def script_file(command, cwd: str):
    """The user's file the program starts in: the script, a module's file under the cwd, or the
    first .py file a launcher command names; None where there is none to edit."""
    candidates = []
    if command.kind == "script":
        target = os.path.join(cwd, command.target)
        candidates.append(os.path.join(target, "__main__.py") if os.path.isdir(target) else target)
    elif command.kind == "module":
        base = os.path.join(cwd, *command.target.split("."))
        candidates += [base + ".py", os.path.join(base, "__main__.py")]
    else:
        candidates += [os.path.join(cwd, word) for word in command.argv[1:] if str(word).endswith(".py")]
    for path in candidates:
        if os.path.isfile(path) and not _installed(path):
            return os.path.realpath(path)
    return None


def _installed(path: str) -> bool:
    return f"{os.sep}site-packages{os.sep}" in path or f"{os.sep}dist-packages{os.sep}" in path


def _shown_argv(command) -> list:
    argv = list(command.argv)
    if command.kind in ("script", "module") and argv:
        argv[0] = "python"
    return argv


def _text(edits: dict, path: str) -> str:
    return edits[path] if path in edits else _read(path)


def _read(path: str) -> str:
    with open(path, "r", encoding="utf-8", newline="") as handle:
        return handle.read()


def apply(patch: Patch) -> None:
    """Write the patched files; refuses a file changed since the patch was made."""
    for change in patch.files:
        if _read(change.path) != change.old:
            raise OSError(f"{change.shown} changed since tune read it; nothing was written")
    for change in patch.files:
        with open(change.path, "w", encoding="utf-8", newline="") as handle:
            handle.write(change.new)
