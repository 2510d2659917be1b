"""Workflows: what `run`, `try`, `run --verify`, `report` and `gate` do, apart from how their
command lines are read. The CLI (gpuprof.commands.cli) parses arguments and calls one of these; the demo and
notebooks can call them the same way."""
