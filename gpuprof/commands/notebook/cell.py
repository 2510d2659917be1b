"""One profiled notebook cell: a run folder of its own, the probes on in the kernel for the cell's
duration only, the system samplers in a helper process outside the kernel's tree, the cell's code
run in the user's namespace as IPython would run it, then the record saved and the report built.

The cell keeps its meaning: its variables land in the kernel's namespace, its printed output is
its own, the value of its last expression is the cell's result, and its exception (Ctrl-C's
KeyboardInterrupt among them) reaches the notebook after the report is shown."""

import ast
import os
import subprocess
import sys
import time

from gpuprof.package import PACKAGE_ROOT
from gpuprof.capture.launch.environment import child_environment
from gpuprof.capture.launch.rundir import create_run_dir
from gpuprof.record.atomic import write_json_atomic
from gpuprof.record.run_header import RunEnd, RunHeader, SamplingSettings
from gpuprof.record.schema import BOOTSTRAP_ENV, EVENTS_DIR, RUN_FILE

SAMPLER_START_S = 30.0      # the helper sampler's start-up, at most
SAMPLER_SAVE_S = 30.0       # its saving, at most
CARRIED_ENV = ("PYTHONPATH", BOOTSTRAP_ENV)   # what spawned DataLoader workers need to load the probes


class CellOptions:
    def __init__(self, steps=None, warmup_steps: int = 0, out=None, interval: float = 0.1, gpu: bool = True):
        self.steps = steps
        self.warmup_steps = warmup_steps
        self.out = out
        self.interval = interval
        self.gpu = gpu


class CellOutcome:
    """What the cell did: its result value, the exception it raised (or None), the run folder."""

    def __init__(self, run_dir, value=None, error=None, started=0.0, ended=0.0):
        self.run_dir = run_dir
        self.value = value
        self.error = error
        self.started = started
        self.ended = ended


def run_cell(shell, code: str, options: CellOptions, first_line: int = 1) -> CellOutcome:
    """Run `code` in the kernel under gpuprof; the record is saved whatever the code did."""
    __tracebackhide__ = True      # noqa: F841
    from gpuprof.capture.probes import boot

    run_dir = create_run_dir(options.out, "notebook-cell")
    settings = {"run_dir": os.path.abspath(run_dir), "events_dir": os.path.abspath(os.path.join(run_dir, EVENTS_DIR)),
                "probes": True, "flush_s": 1.0, "max_steps": options.steps, "warmup_steps": options.warmup_steps,
                "supervisor_pid": os.getpid()}
    saved_env = {name: os.environ.get(name) for name in CARRIED_ENV}
    helper = _start_sampler(run_dir, options)
    wall_start = time.time()
    outcome = CellOutcome(run_dir)
    _carry_bootstrap(settings)
    boot.begin_cell(settings)
    outcome.started = time.monotonic()
    try:
        outcome.value = execute(shell, code, first_line)
    except BaseException as exc:    # the cell's own exception, KeyboardInterrupt and SystemExit too
        outcome.error = exc
    finally:
        outcome.ended = time.monotonic()
        boot.end_cell()
        _restore_env(saved_env)
        _stop_sampler(helper)
    _save_meta(run_dir, code, outcome, wall_start, options)
    return outcome


def execute(shell, code: str, first_line: int = 1):
    """Run the cell as IPython does (its input transformations, %magics and !commands included),
    in the user's namespace; the value of a last bare expression is returned. An exception
    propagates unchanged. `first_line`: the line of the cell the code starts at (2 under a
    %%gpuprof line), so every line gpuprof or a traceback names is the cell's as shown."""
    __tracebackhide__ = True      # noqa: F841  (IPython leaves gpuprof's frames out of the traceback)
    source = "\n" * (first_line - 1) + shell.transform_cell(code)
    tree = shell.compile.ast_parse(source)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    # Named as IPython names the running cell ("Cell In[N]" in tracebacks; the count is already past it).
    filename = shell.compile.cache(source, max(shell.execution_count - 1, 0), raw_code=code)
    namespace = shell.user_ns
    exec(shell.compile(tree, filename, "exec"), shell.user_global_ns, namespace)
    if last is not None:
        return eval(shell.compile(last, filename, "eval"), shell.user_global_ns, namespace)
    return None


def _carry_bootstrap(settings: dict) -> None:
    """Spawned DataLoader workers are fresh interpreters: they load the probes as `run`'s children
    do, from the bootstrap on PYTHONPATH and the settings variable, for this cell only."""
    env = child_environment(os.environ, settings)
    for name in CARRIED_ENV:
        os.environ[name] = env[name]


def _restore_env(saved: dict) -> None:
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _start_sampler(run_dir: str, options: CellOptions):
    """The helper process; None when it could not start (the report then has no system figures)."""
    env = dict(os.environ)
    for name in CARRIED_ENV:
        env.pop(name, None)
    env["PYTHONPATH"] = PACKAGE_ROOT + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
    try:
        helper = subprocess.Popen([sys.executable, "-m", "gpuprof.commands.notebook.sampler", str(os.getpid()), run_dir,
                                   str(options.interval), "1" if options.gpu else "0"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                                  start_new_session=True)
    except OSError:
        return None
    helper.wait(timeout=SAMPLER_START_S)             # the first fork returns at once
    if not _read_word(helper.stdout, "ready", SAMPLER_START_S):
        _stop_sampler(helper)
        return None
    return helper


def _stop_sampler(helper) -> None:
    if helper is None:
        return
    try:
        helper.stdin.close()
    except OSError:
        pass
    _read_word(helper.stdout, "saved", SAMPLER_SAVE_S)
    try:
        helper.stdout.close()
    except OSError:
        pass


def _read_word(stream, word: str, timeout: float) -> bool:
    import select
    deadline = time.monotonic() + timeout
    line = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], max(deadline - time.monotonic(), 0.0))
        if not ready:
            return False
        chunk = os.read(stream.fileno(), 64)
        if not chunk:
            return False
        line += chunk
        if word.encode() in line:
            return True
    return False


def _save_meta(run_dir: str, code: str, outcome: CellOutcome, wall_start: float, options: CellOptions) -> None:
    error = outcome.error
    interrupted = isinstance(error, KeyboardInterrupt)
    status = 0 if error is None or (isinstance(error, SystemExit) and not error.code) else 1
    first_line = next((line.strip() for line in code.splitlines() if line.strip()), "")
    write_json_atomic(os.path.join(run_dir, RUN_FILE), RunHeader(
        command=["%%gpuprof", first_line[:200]], kind="notebook", target="notebook cell",
        wall_start=wall_start, start_monotonic=outcome.started, end_monotonic=outcome.ended, pid=os.getpid(),
        end=RunEnd(returncode=status, exit_code=status, interrupted=interrupted),
        extras={"cell_error": None if error is None else f"{type(error).__name__}: {str(error)[:200]}"},
        settings=SamplingSettings(interval_s=options.interval, probes=True, gpu=options.gpu, max_steps=options.steps,
                                  warmup_steps=options.warmup_steps),
    ).to_json())
