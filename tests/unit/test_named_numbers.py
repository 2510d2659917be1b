"""Every threshold, weight and confidence term in the verdict (gpuprof/judge) and the advice
(gpuprof/advise) has a name: a number written inline is one a reader cannot look up, and one a
change to it cannot find. Allowed inline: units, indices, halves and rounding digits."""

import ast
import os

import pytest

from tests.conftest import ROOT

FOLDERS = ("judge", "stats", "advise")
ALLOWED = {0, 1, 2, 3, -1, 100, 1000, 1024, 1e3, 1e6, 1e9}


def _sources(folder: str) -> list:
    base = os.path.join(ROOT, "gpuprof", folder)
    assert os.path.isdir(base), f"gpuprof/{folder} is not a folder"
    return sorted(os.path.join(path, name) for path, _, names in os.walk(base) for name in names
                  if name.endswith(".py"))


def _named_constant(node) -> bool:
    """A module-level assignment to an UPPER_CASE name: the place a number gets its name."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return bool(targets) and all(isinstance(t, ast.Name) and t.id.isupper() for t in targets)


def _literals(tree) -> list:
    """(line, value) of each numeric literal outside the module's named constants; a unary minus
    is part of its literal."""
    found = []

    def visit(node):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _number(node.operand):
            found.append((node.lineno, -node.operand.value))
            return
        if _number(node):
            found.append((node.lineno, node.value))
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    for statement in tree.body:
        if not _named_constant(statement):
            visit(statement)
    return found


def _number(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def unnamed(path: str) -> list:
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    return [f"{os.path.relpath(path, ROOT)}:{line}: {value!r}" for line, value in _literals(tree)
            if value not in ALLOWED]


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_threshold_and_weight_has_a_name(folder):
    found = [item for path in _sources(folder) for item in unnamed(path)]
    assert not found, f"{len(found)} unnamed numbers:\n" + "\n".join(found)


def test_the_rule_finds_an_inline_threshold_and_passes_a_named_one(tmp_path):
    program = tmp_path / "rule.py"
    program.write_text("LIMIT = 0.25\nSPAN: float = -0.4\n\ndef f(x):\n    return x > 0.5 and x * 100 < LIMIT - 1e-9\n")
    assert [entry.split(": ", 1)[1] for entry in unnamed(str(program))] == ["0.5", "1e-09"]
