"""The one table of priors (gpuprof/priors): every entry says where its number came from, what
it is for and what the estimate loses without it; every entry is used; the estimating modules write
no number of their own beside it; and docs/priors.md is the table as generated."""

import ast
import os

from gpuprof import priors
from gpuprof.priors.table import markdown, used_by

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXES = os.path.join(ROOT, "gpuprof", "advise", "fixes")
#: Modules beside the fixes whose numbers are estimates' assumptions.
ESTIMATING = ("gpuprof/advise/fix.py", "gpuprof/advise/model.py", "gpuprof/advise/math_modes.py",
              "gpuprof/judge/verdict/input_cost.py")

#: Module-level float constants that are definitions, not priors: (module, name) -> why.
ALLOWED = {
    ("gpuprof/advise/fix.py", "MIN_GAIN"): "a definition: the least estimate worth showing",
    ("gpuprof/advise/math_modes.py", "DATA_READY_WAIT"): "a definition: what 'with the data ready' means",
    ("gpuprof/advise/math_modes.py", "CLOCK_NOTED"): "when a lower busy clock scales the peaks, not by how much",
    ("gpuprof/judge/verdict/input_cost.py", "MIN_PRODUCER_CORES"): "when the input's cost is stated, not what it is",
    ("gpuprof/advise/fixes/decode_reduced_size.py", "REDUCIBLE"): "draft mode's least reduction is 1/2",
    ("gpuprof/advise/fixes/decode_reduced_size.py", "DOMINANT"): "when the fix is offered, not what it saves",
    ("gpuprof/advise/fixes/spawned_worker_imports.py", "SLOW_START_S"): "when the fix is offered (a slow start)",
    ("gpuprof/advise/fixes/num_workers.py", "WORKER_MEMORY_SHARE"): "a policy: the memory workers may take",
    ("gpuprof/advise/model.py", "TINY"): "a numerical guard against dividing by an empty step",
    ("gpuprof/advise/model.py", "LEAST_COMPUTE_SHARE"): "a numerical guard: the producers a wait asks for stay finite",
    ("gpuprof/advise/math_modes.py", "FLOPS_PER_TFLOP"): "a unit",
    ("gpuprof/advise/math_modes.py", "SQUARE_ROOT"): "a definition: the central estimate is the geometric middle",
    ("gpuprof/advise/math_modes.py", "LEAST_SHARE_NAMED"): "a wording threshold: the families named",
    ("gpuprof/advise/math_modes.py", "TENTHS_BELOW_S"): "a wording threshold: the digits a time is written with",
    ("gpuprof/advise/fixes/ddp_no_sync.py", "SEVERAL_SYNCS"): "a rounding threshold: more than one all-reduce a step",
    ("gpuprof/advise/fixes/gpu_staging.py", "LEAST_FREE_MEMORY"): "when the fix is offered, not what it saves",
    ("gpuprof/advise/fixes/larger_batch.py", "LEAST_FREE_MEMORY"): "when the fix is offered, not what it saves",
    ("gpuprof/advise/fixes/hdf5_chunk_cache.py", "MOST_OPENING_SHARE"): "a numerical guard: the reads keep a share",
    ("gpuprof/advise/fixes/num_workers.py", "MEASURABLE_PRODUCER_CORES"): "a numerical guard against tiny divisors",
    ("gpuprof/advise/fixes/num_workers.py", "SHIPPING_NAMED_FROM"): "a wording threshold: when shipping is named",
    ("gpuprof/advise/fixes/persistent_workers.py", "LEAST_GAIN"): "a definition: the least estimate worth showing",
    ("gpuprof/advise/fixes/pin_memory.py", "MOSTLY_PAGEABLE"): "when the fix is offered, not what it saves",
    ("gpuprof/advise/fixes/tf32.py", "LEAST_HIGH_END"): "when the fix is offered, not what it saves",
    ("gpuprof/advise/fixes/training_threads.py", "WHOLE_CORES_SLACK"): "a numerical guard: float sums of cores",
}


def test_every_prior_has_a_value_a_source_a_use_and_what_is_lost_without_it():
    assert len({prior.id for prior in priors.ALL}) == len(priors.ALL)
    for prior in priors.ALL:
        assert prior.kind in priors.KINDS, prior.id
        assert prior.source.strip() and prior.used_for.strip() and prior.without_it.strip(), prior.id
        assert prior.value is not None or (prior.low is not None and prior.high is not None), prior.id
        if isinstance(prior.value, (int, float)) and prior.low is not None:
            assert prior.low <= prior.value <= prior.high, prior.id


def test_a_prior_backed_by_one_program_says_it_needs_a_second():
    for prior in priors.ALL:
        assert prior.needs_second_program == (len(prior.programs) == 1), prior.id


def test_every_prior_is_used_by_a_module():
    users = used_by()
    assert [prior_id for prior_id, modules in users.items() if not modules] == []
    assert "gpuprof/advise/fixes/num_workers.py" in users["num-workers.cpu-only-worker-rate"]


def test_the_docs_page_is_the_table_as_generated():
    with open(os.path.join(ROOT, "docs", "priors.md"), "r", encoding="utf-8") as handle:
        assert handle.read() == markdown(), "regenerate it: python -m gpuprof.priors > docs/priors.md"


def module_level_floats(path: str) -> list:
    """Names assigned at module level from an expression holding a float literal."""
    with open(os.path.join(ROOT, path), "r", encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    found = []
    for node in tree.body:
        value = getattr(node, "value", None)
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or value is None:
            continue
        if any(isinstance(n, ast.Constant) and isinstance(n.value, float) for n in ast.walk(value)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)]
    return found


def test_no_fix_or_estimating_module_writes_a_float_constant_that_is_not_a_prior():
    modules = [os.path.relpath(os.path.join(FIXES, name), ROOT) for name in sorted(os.listdir(FIXES))
               if name.endswith(".py")] + list(ESTIMATING)
    literals = {(path.replace(os.sep, "/"), name) for path in modules for name in module_level_floats(path)}
    assert literals - set(ALLOWED) == set(), "import these from gpuprof/priors, or allow them with a reason"
    assert set(ALLOWED) <= literals, "an allowed literal is gone: drop it from ALLOWED"
