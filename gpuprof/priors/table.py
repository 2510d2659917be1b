"""The table of priors rendered for people (docs/priors.md): generated from the entries themselves
and from the modules that import them, so that the page cannot say other than the code."""

import ast
import importlib
import os

from gpuprof.priors import ALL, TOPICS, names
from gpuprof.priors.prior import Prior

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # gpuprof/
ROOT = os.path.dirname(PACKAGE)
OWN = os.path.dirname(os.path.abspath(__file__))

HEADER = """# Priors: the numbers an estimate rests on that a run does not measure

Every figure below is assumed, calibrated on a program, or measured once on one machine; the run
itself cannot check it. Each is one entry of `gpuprof/priors/`, which the estimating modules
import instead of writing the number. This page is generated from those entries
(`python -m gpuprof.priors > docs/priors.md`), and a unit test fails when the two differ.
"Checked on" names the programs a figure was fitted on or checked against; one program alone is
flagged: the figure needs a second before it is trusted further. A range reads "central (low–high)".
"""


def used_by() -> dict:
    """{prior id: the modules under gpuprof/ that import it}, read from their import statements."""
    found = {prior.id: [] for prior in ALL}
    for folder, _, files in sorted(os.walk(PACKAGE)):
        if folder == OWN or folder.startswith(OWN + os.sep):
            continue
        for name in sorted(files):
            path = os.path.join(folder, name)
            if name.endswith(".py"):
                for prior in _imported(path):
                    found[prior.id].append(os.path.relpath(path, ROOT))
    return found


def _imported(path: str) -> list:
    """The priors a module imports by name (from gpuprof.priors or one of its topic modules)."""
    with open(path, "r", encoding="utf-8") as handle:
        text = handle.read()
    if "gpuprof.priors" not in text:
        return []
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gpuprof.priors"):
            module = importlib.import_module(node.module)
            out += [getattr(module, alias.name) for alias in node.names
                    if isinstance(getattr(module, alias.name, None), Prior)]
    return out


def figure(value, unit: str = "") -> str:
    """One number in the unit it is written in."""
    if unit == "s":
        return f"{value * 1e6:g} µs" if value < 1e-3 else f"{value * 1e3:g} ms" if value < 1 else f"{value:g} s"
    if unit == "B/s":
        return f"{value / 1e9:g} GB/s"
    return f"{value:g}x" if unit == "x" else f"{value:g}"


def ends(central, low, high, unit: str = "") -> str:
    """"central (low–high)", "low–high" or "central", in the unit."""
    span = "" if low is None or high is None else figure(low, unit) if low == high else \
        f"{figure(low, unit)}–{figure(high, unit)}"
    if central is None:
        return span
    return f"{figure(central, unit)} ({span})" if span else figure(central, unit)


def value_words(prior: Prior) -> str:
    """The prior's value(s) as the table shows them."""
    unit = prior.unit if prior.unit in ("x", "s", "B/s") else ""
    if isinstance(prior.value, dict):
        return _table(prior.value, unit) + (f" ({prior.unit})" if prior.unit and not unit else "")
    return ends(prior.value, prior.low, prior.high, unit) + (f" {prior.unit}" if prior.unit and not unit else "")


def _table(table: dict, unit: str) -> str:
    """"key: entry; ...", a nested table's entries as "key entry, ..."."""
    return "; ".join(f"{_key(key)}: {_nested(value, unit) if isinstance(value, dict) else _entry(value, unit)}"
                     for key, value in table.items())


def _nested(table: dict, unit: str) -> str:
    return ", ".join(f"{_key(key)} {_entry(value, unit)}" for key, value in table.items())


def _key(key) -> str:
    if isinstance(key, tuple):
        return f"{key[0]} {key[1]}→{key[2]}" if len(key) == 3 else " ".join(map(str, key))
    return str(key)


def _entry(value, unit: str) -> str:
    if isinstance(value, tuple) and len(value) == 3:
        return ends(value[1], value[0], value[2], unit)
    if isinstance(value, tuple) and len(value) == 2:
        return ends(None, value[0], value[1], unit)
    return figure(value, unit)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown() -> str:
    """docs/priors.md: the summary, then one table per topic."""
    users = used_by()
    single = [prior.id for prior in ALL if prior.needs_second_program]
    unchecked = [prior.id for prior in ALL if not prior.programs]
    lines = [HEADER,
             f"{len(ALL)} priors. {len(single)} rest on one program and need a second: "
             + ", ".join(f"`{i}`" for i in single) + f". {len(unchecked)} are checked on no program: "
             + ", ".join(f"`{i}`" for i in unchecked) + "."]
    for topic in TOPICS:
        lines += ["", f"## {topic.TITLE}", "", topic.__doc__.split("\n\n")[0].replace("\n", " "), "",
                  "| id | value | source | checked on | used for | used by | without it |",
                  "|---|---|---|---|---|---|---|"]
        for prior in names(topic).values():
            checked = ", ".join(f"`{p}`" for p in prior.programs) or "no program"
            if prior.needs_second_program:
                checked += ": **one program, needs a second**"
            modules = ", ".join(f"`{m}`" for m in users[prior.id]) or "nothing"
            lines.append("| " + " | ".join(_cell(c) for c in (
                f"`{prior.id}` ({prior.kind})", value_words(prior), prior.source, checked, prior.used_for,
                modules, prior.without_it)) + " |")
    return "\n".join(lines) + "\n"
