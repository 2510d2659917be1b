"""Every GPU scenario, end to end through `gpuprof run` on the simulated device: the verdict, the
fixes, the job's GPU by UUID, each rank's GPU, the GPUs still sampled and the notes each expects
(gpuprof.testing.scenarios; the same runner as `gpuprof doctor --simulated`)."""

import sys

import pytest

from gpuprof.commands.doctor.runner import Runner
from gpuprof.testing.scenarios import SCENARIOS

pytest.importorskip("torch")


def _explain(outcome) -> str:
    lines = [f"{outcome.scenario.name}: {outcome.error or 'disagrees'} (run kept in {outcome.folder})"]
    lines += [f"  {check}" for check in outcome.checks if not check.ok]
    return "\n".join(lines)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_the_scenario_gets_what_it_expects_on_the_simulated_gpu(scenario, tmp_path):
    outcome = Runner(str(tmp_path), python=sys.executable).run(scenario)
    assert outcome.ok, _explain(outcome)
