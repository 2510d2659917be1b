"""gpuprof's own lines on stderr: one line per problem, never a traceback."""

import sys


def error(message: str) -> None:
    sys.stderr.write(f"gpuprof: error: {message}\n")
