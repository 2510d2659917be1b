"""The one table of priors: every number an estimate rests on that the run does not measure, each
with its source, what it is used for and what the estimate loses without it. A module that needs
one imports it from here (its topic module) instead of writing the number; docs/priors.md is this
table rendered (`python -m gpuprof.priors`), and tests keep the two the same.

Not here: definitions (what counts as notable, the least gain worth showing, the change a fix
proposes), numerical guards, and the verdict's confidence weights; figures outside gpuprof/advise
and the input cost's modules (the data sheets' peaks in gpuprof/judge/sections/peaks.py, the verdict
bounds in gpuprof/judge/verdict/evidence.py)."""

from gpuprof.priors import copy_fixes, gpu_rates, input_fixes, model_fixes, rollout_fixes, step_model, verdicts
from gpuprof.priors.prior import KINDS, Prior

#: The topic modules, in the order the table shows them.
TOPICS = (step_model, input_fixes, copy_fixes, model_fixes, gpu_rates, rollout_fixes, verdicts)


def names(topic) -> dict:
    """{the Python name a module imports: the prior} for one topic module, in the order written."""
    return {name: value for name, value in vars(topic).items() if isinstance(value, Prior)}


ALL = tuple(prior for topic in TOPICS for prior in names(topic).values())
_BY_ID = {prior.id: prior for prior in ALL}


def get(prior_id):
    """The prior with this id, or None."""
    return _BY_ID.get(prior_id)


__all__ = ["ALL", "KINDS", "Prior", "TOPICS", "get", "names"]
