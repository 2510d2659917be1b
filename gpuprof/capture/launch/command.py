"""Turn `gpuprof run` arguments into the exact argv plain Python would have been given."""

import importlib.machinery
import os
import sys

from gpuprof.errors import UsageProblem


class ChildCommand:
    """What runs: its argv, its kind ("script", "module" or "command"), its target (the script path,
    module name or executable) and the arguments after it."""

    def __init__(self, argv: list, kind: str, target: str, args: list = None):
        self.argv = argv
        self.kind = kind
        self.target = target
        self.args = list(args or [])

    def __repr__(self) -> str:
        return f"ChildCommand(argv={self.argv!r}, kind={self.kind!r}, target={self.target!r})"

    @property
    def label(self) -> str:
        """A short name for the run folder: the script or module name."""
        if self.kind == "script":
            base = os.path.splitext(os.path.basename(os.path.normpath(self.target)))[0]
        elif self.kind == "module":
            base = self.target.rsplit(".", 1)[-1]
        else:
            base = _command_label(self.argv)
        return "".join(c if c.isalnum() or c in "-_" else "_" for c in base) or "run"


def _command_label(argv) -> str:
    for arg in argv[1:]:
        if arg.endswith(".py"):
            return os.path.splitext(os.path.basename(arg))[0]
    return os.path.basename(argv[0])


def default_python() -> str:
    """The interpreter `python script.py` would run in this shell: the first `python` (else
    `python3`) on PATH, so a program run in another virtual environment than gpuprof's sees its own
    packages; gpuprof's own interpreter when PATH has neither."""
    for name in ("python", "python3"):
        found = _on_path(name)
        if found is not None:
            return found
    return sys.executable


def _on_path(name: str):
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or os.curdir, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def from_cli(target=None, module=None, command_mode: bool = False, python=None) -> ChildCommand:
    """The command a `run`/`try` line names: `-- COMMAND`, `-m MODULE ARGS`, or `SCRIPT ARGS`."""
    target = list(target or [])
    if command_mode:
        return resolve(command=target)
    if module is not None:
        return resolve(module=module, args=target, python=python)
    if target:
        return resolve(script=target[0], args=target[1:], python=python)
    raise UsageProblem("nothing to run: give a SCRIPT, -m MODULE, or -- COMMAND")


def resolve(script=None, module=None, command=None, args=(), python=None) -> ChildCommand:
    """Check the target exists and build the child's argv; raise UsageProblem with one clear line."""
    args = list(args)
    if python is None:
        python = default_python()
    elif os.sep not in python:
        found = _on_path(python)
        if found is None:
            raise UsageProblem(f"--python {python}: not found on PATH")
        python = found
    elif not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise UsageProblem(f"--python {python}: not an executable file")
    if command is not None:
        if not command:
            raise UsageProblem("no command given after --")
        exe = command[0]
        if os.sep in exe:
            if not os.path.exists(exe):
                raise UsageProblem(f"command not found: {exe}")
            if os.path.isdir(exe) or not os.access(exe, os.X_OK):
                raise UsageProblem(f"not an executable file: {exe}")
        elif _which(exe) is None:
            raise UsageProblem(f"command not found: {exe}")
        return ChildCommand(argv=list(command), kind="command", target=exe, args=list(command[1:]))
    if module is not None:
        _check_module(module, same_interpreter=_same_file(python, sys.executable))
        return ChildCommand(argv=[python, "-m", module] + args, kind="module", target=module, args=args)
    if script is None:
        raise UsageProblem("nothing to run: give a SCRIPT, -m MODULE, or -- COMMAND")
    _check_script(script)
    return ChildCommand(argv=[python, script] + args, kind="script", target=script, args=args)


def _check_script(script: str) -> None:
    if not os.path.exists(script):
        raise UsageProblem(f"no such file: {script}")
    if os.path.isdir(script):
        if os.path.isfile(os.path.join(script, "__main__.py")):
            return
        raise UsageProblem(f"{script} is a directory, not a Python script")
    if not os.access(script, os.R_OK):
        raise UsageProblem(f"cannot read {script}: permission denied")
    try:
        with open(script, "rb") as handle:
            head = handle.read(4096)
    except OSError as exc:
        raise UsageProblem(f"cannot read {script}: {exc.strerror or exc}")
    if b"\0" in head and not _is_zipfile(script) and not script.endswith(".pyc"):
        raise UsageProblem(f"{script} is a binary file, not a Python script")


def same_environment(a: str, b: str) -> bool:
    """Whether two interpreters see the same packages: the same virtual environment (the folder
    holding pyvenv.cfg), or, outside one, the same executable. A venv's python links to its base
    interpreter, so comparing files alone would call a venv and the system python the same."""
    return _environment(a) == _environment(b)


def _environment(python: str) -> str:
    path = os.path.abspath(python)
    root = os.path.dirname(os.path.dirname(path))
    if os.path.isfile(os.path.join(root, "pyvenv.cfg")):
        return os.path.realpath(root)
    return os.path.realpath(path)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b) or os.path.samefile(a, b)
    except OSError:
        return False


def _check_module(module: str, same_interpreter: bool = True) -> None:
    if not module or any(not part.isidentifier() for part in module.split(".")):
        raise UsageProblem(f"not a module name: {module!r}")
    top = module.split(".", 1)[0]
    if top in sys.builtin_module_names:
        return
    if not same_interpreter:
        return      # another interpreter has other packages: it says itself if the module is missing
    # Looks the name up without importing anything (no user code runs in gpuprof).
    search = [os.getcwd()] + [p for p in sys.path if p]
    if importlib.machinery.PathFinder.find_spec(top, search) is None:
        raise UsageProblem(f"no module named {top!r}")


# shutil and zipfile cost ~10 ms to import, paid before the program starts: imported when needed.
def _which(exe: str):
    import shutil
    return shutil.which(exe)


def _is_zipfile(path: str) -> bool:
    import zipfile
    return zipfile.is_zipfile(path)
