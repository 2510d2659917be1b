"""The notebook magics: `%%gpuprof [--steps N] [--warmup-steps K] [--json FILE] [--html FILE]` on a
cell, `%gpuprof STATEMENT` on one line, `%gpuprof try ARGS...` for `gpuprof try` on a script.

The report shows inline as one display bundle: the terminal report as text/plain and the HTML
report, with its plots, as text/html (gpuprof.commands.notebook.display). Nothing is served and no file is
needed to view it."""

import argparse
import shlex
import subprocess
import sys

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from gpuprof.errors import UsageProblem


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"%%gpuprof: {message}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="%%gpuprof", add_help=False)
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--warmup-steps", type=int, default=0)
    parser.add_argument("--json", dest="json_path", default=None)
    parser.add_argument("--html", default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--no-gpu", dest="gpu", action="store_false")
    parser.add_argument("--quiet", "-q", action="store_true")
    return parser


@magics_class
class GpuprofMagics(Magics):
    @line_cell_magic
    def gpuprof(self, line: str, cell: str = None):
        """%%gpuprof [--steps N] [--warmup-steps K] [--json FILE] [--html FILE] [--out DIR]: profile
        the cell and show the report inline. %gpuprof STATEMENT: the same for one statement.
        %gpuprof try ARGS: run `gpuprof try ARGS` (a script path and its options)."""
        __tracebackhide__ = True     # noqa: F841
        words = shlex.split(line)
        if cell is None and words[:1] == ["try"]:
            return self._try(words[1:])
        if cell is None:
            options, statement = _split_line(line)
            if not statement.strip():
                raise UsageError("%gpuprof needs a statement (or use %%gpuprof on a cell, or %gpuprof try SCRIPT)")
            return self._profile(options, statement)
        return self._profile(_parser().parse_args(words), cell, first_line=2)

    def _profile(self, args, code: str, first_line: int = 1):
        __tracebackhide__ = True     # noqa: F841
        from gpuprof.commands.notebook.cell import CellOptions, run_cell
        from gpuprof.commands.notebook.display import show_report
        from gpuprof.present.reporting.outputs import check_all

        if args.steps is not None and args.steps < 1:
            raise UsageError(f"%%gpuprof: --steps must be at least 1, not {args.steps}")
        if args.warmup_steps < 0:
            raise UsageError(f"%%gpuprof: --warmup-steps must not be negative, not {args.warmup_steps}")
        try:
            check_all((args.json_path, "--json"), (args.html, "--html"))
            outcome = run_cell(self.shell, code, CellOptions(steps=args.steps, warmup_steps=args.warmup_steps,
                                                             out=args.out, interval=args.interval, gpu=args.gpu),
                               first_line=first_line)
        except UsageProblem as exc:
            raise UsageError(f"%%gpuprof: {exc}")
        report = show_report(outcome.run_dir, json_path=args.json_path, html_path=args.html, quiet=args.quiet)
        error = outcome.error
        if error is not None and not _planned_stop(error, report):
            raise error
        return outcome.value

    def _try(self, words: list):
        """`gpuprof try` in a child process (the kernel is not restarted); its lines stream into the cell."""
        if not words:
            raise UsageError("%gpuprof try needs a script: %gpuprof try [OPTIONS] SCRIPT [ARGS]...")
        child = subprocess.Popen([sys.executable, "-m", "gpuprof", "try", *words], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, bufsize=1)
        try:
            for line in child.stdout:
                print(line, end="", flush=True)
        except KeyboardInterrupt:
            child.terminate()
            child.wait()
            raise
        status = child.wait()
        if status not in (0, 1):
            print(f"gpuprof try ended with status {status}")


def _split_line(line: str):
    """(options, statement) of a line magic: leading --options, then the statement as written."""
    parser = _parser()
    words = line.split()
    taken = 0
    while taken < len(words) and words[taken].startswith("-"):
        option = words[taken]
        taken += 1
        if option in ("--steps", "--warmup-steps", "--json", "--html", "--out", "--interval") and taken < len(words):
            taken += 1
    options = parser.parse_args(words[:taken])
    statement = line
    for word in words[:taken]:
        statement = statement.split(word, 1)[1]
    return options, statement.strip()


def _planned_stop(error, report) -> bool:
    """--steps ended the cell at a step boundary (SystemExit(0) from the probes): not an error."""
    return isinstance(error, SystemExit) and not error.code and bool((report or {}).get("stopped_after_steps"))


def load(ipython) -> None:
    from gpuprof.capture.probes import boot
    boot.arm_in_kernel()
    ipython.register_magics(GpuprofMagics)
