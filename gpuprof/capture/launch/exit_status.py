"""gpuprof's own end as its parent would have seen plain python's: a job that died of signal N makes
gpuprof die of signal N too, after everything is written. A shell, `subprocess` or a scheduler then
sees WIFSIGNALED (a negative returncode, "Segmentation fault", Slurm's "killed by signal"), not an
ordinary exit with 128+N."""

import signal
import sys


class JobStatus(int):
    """An exit status (128+N when the job died of signal N) that remembers the signal. Anywhere it
    is the plain number; only the command line's very last step (die_like) uses `died_of`."""

    def __new__(cls, status: int, died_of: int = None):
        value = super().__new__(cls, status)
        value.died_of = died_of
        return value


def die_like(status) -> None:
    """Die of the job's signal when `status` carries one; return otherwise (also when the signal's
    default is to be ignored, so the caller exits with the number)."""
    sig = getattr(status, "died_of", None)
    if not sig:
        return
    _flush_and_run_exit_functions()
    _no_core_dump()
    _no_fault_handler()
    if sig != signal.SIGKILL:
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (ValueError, OSError):
            return
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
        # raise() is thread-directed: this thread has just unblocked it, whatever the others hold.
        signal.raise_signal(sig)
    except (ValueError, OSError):
        return


def _flush_and_run_exit_functions() -> None:
    """What sys.exit would still have done: atexit functions, flushed stdout and stderr."""
    try:
        import atexit
        atexit._run_exitfuncs()
    except Exception:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass


def _no_core_dump() -> None:
    """The job's SIGSEGV may have dumped the job's core; a second core of gpuprof helps nobody."""
    try:
        import resource
        _, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (0, hard))
    except (ImportError, ValueError, OSError):
        pass


def _no_fault_handler() -> None:
    """With PYTHONFAULTHANDLER set, a re-raised SIGSEGV would print gpuprof's own stack first."""
    try:
        import faulthandler
        faulthandler.disable()
    except Exception:
        pass
