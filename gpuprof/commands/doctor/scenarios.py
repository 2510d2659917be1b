"""Which scenarios to run: gpuprof's own (`gpuprof.testing.scenarios.SCENARIOS`) by name, or a
user's Python file that defines `SCENARIO` or `SCENARIOS`, so a new scenario runs without changing
gpuprof. A file's relative `program` is looked for beside the file first."""

import dataclasses
import importlib.util
import os

from gpuprof.errors import UsageProblem


def builtin() -> list:
    from gpuprof.testing import scenarios
    return list(getattr(scenarios, "SCENARIOS", None) or [])


def choose(names: list, real_only: bool = False, known=None) -> list:
    """The scenarios `--scenario` names (each a NAME or a FILE), or every built-in one (only those
    marked `real` for `real_only`). UsageProblem for an unknown name or an unreadable file."""
    known = builtin() if known is None else known
    if not names:
        chosen = [s for s in known if s.real or not real_only]
        if not chosen:
            which = "marked real " if real_only and known else ""
            raise UsageProblem(f"no scenarios {which}are defined in gpuprof.testing.scenarios; "
                               "give one with --scenario FILE")
        return chosen
    chosen = []
    for name in names:
        chosen.extend(from_file(name) if _is_file(name) else [by_name(name, known)])
    return chosen


def by_name(name: str, known: list):
    for scenario in known:
        if scenario.name == name:
            return scenario
    names = ", ".join(s.name for s in known) or "none are defined"
    raise UsageProblem(f"--scenario {name}: no such scenario (known: {names}), and no such file")


def from_file(path: str) -> list:
    """The scenarios a Python file defines; UsageProblem when it cannot be read or defines none."""
    from gpuprof.testing.scenarios import Scenario
    if not os.path.isfile(path):
        raise UsageProblem(f"--scenario {path}: no such file")
    name = "gpuprof_doctor_scenario_" + "".join(c if c.isalnum() else "_" for c in os.path.abspath(path))
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as exc:
        first = (str(exc).splitlines() or [""])[0]
        raise UsageProblem(f"--scenario {path}: cannot load it ({exc.__class__.__name__}: {first})")
    found = getattr(module, "SCENARIOS", None)
    if found is None:
        found = [module.SCENARIO] if hasattr(module, "SCENARIO") else []
    found = list(found)
    if not found or not all(isinstance(s, Scenario) for s in found):
        raise UsageProblem(f"--scenario {path}: define SCENARIO (a gpuprof.testing.scenarios.Scenario) or "
                           "SCENARIOS (a list of them)")
    folder = os.path.dirname(os.path.abspath(path))
    return [_beside(s, folder) for s in found]


def _beside(scenario, folder: str):
    """The scenario with a relative program found beside its file made absolute."""
    if os.path.isabs(scenario.program) or not os.path.isfile(os.path.join(folder, scenario.program)):
        return scenario
    return dataclasses.replace(scenario, program=os.path.join(folder, scenario.program))


def _is_file(name: str) -> bool:
    return name.endswith(".py") or os.sep in name or os.path.isfile(name)
