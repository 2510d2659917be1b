"""input.env: the loop waits on environment steps (gymnasium, Stable-Baselines3's vector envs,
reinforcement learning), not on a DataLoader.

Evidence: the environment section (gpuprof.judge.sections.environment): the seconds the training
process spent in its outermost env `step` calls over the measured window, their share of it, and,
for a loop that collects and then learns, the phases' shares. Environment stepping made free bounds
the speed-up by 1 / (1 - share).

It is the verdict only where env stepping is the largest part of the time: past a bound from which
a wait is the verdict (INPUT_BOUND; MEASURED_BOUND where the rollout's parts were measured), and no
smaller than the other parts the report tells apart (the learning phase, and the rollout's other
parts: policy inference, host conversions, the rest; where measured phases show the rollout is
most of the time, the rollout's other parts only). Without phases, the rest of the window counts
as one part. A CartPole PPO whose env steps are 11.5% of the time stays compute (made free: 1.15x)
and names the share as a finding.

Beside other processes that held notable cores, the parts are taken at their uncontended pace
(gpuprof.judge.sections.rollout: each part at the pace of its fastest calls), the job's own shares: a
busy machine stretches the policy's multi-threaded calls far more than a single-threaded env step,
and would otherwise turn an env that is most of the time into a minority. The measured share stays
in the evidence and the reason; the busy machine lowers the verdict's confidence."""

from gpuprof.judge.verdict.bottleneck import BY_SHARE, Bottleneck
from gpuprof.judge.verdict.evidence import INPUT_BOUND, Evidence
from gpuprof.judge.verdict.rules import Finding, clamp, rounded, step_confidence
from gpuprof.judge.verdict.rules.inputs import margin_confidence

ID = "input.env"

MEASURED_BOUND = 0.2  # env stepping, the largest of the measured parts, from which it is the verdict
NOTABLE = 0.05      # an env share worth a finding (findings from 10% are listed in the report)


def evaluate(ev: Evidence):
    measured = ev.env_share
    if measured is None:
        return None
    env = ev.env or {}
    alone = job_alone(ev)
    share = alone["parts"]["env"] if alone else measured
    if share < NOTABLE:
        return None
    phases = alone or env.get("phases")
    others = _other_parts(phases, share)
    largest_other = max(v for k, v in others.items() if k != "learning" or not _rollout_is_the_time(phases))
    margin = share - largest_other
    confidence = step_confidence(ev) * margin_confidence(abs(margin))   # near another part's share: less sure
    evidence = {"env_share": rounded(share), "env_s": env.get("seconds"), "env_calls": env.get("calls"),
                "per_call_s": env.get("per_call_s"), "per_env_step_s": env.get("per_env_step_s"),
                "num_envs": env.get("num_envs"), "vector_cls": env.get("vector_cls"), "async": env.get("async"),
                "library": env.get("library"),
                "largest_other_part": rounded(largest_other), **{f"{k}_share": rounded(v) for k, v in others.items()}}
    reason = _reason(env, share, others)
    if alone:
        evidence.update(env_share_measured=rounded(measured), other_cores=ev.other_cores)
        reason += _busy_words(ev, measured, alone)
    return Finding(ID, share, confidence, evidence, reason)


def job_alone(ev: Evidence):
    """The rollout's parts at their uncontended pace where other processes held notable cores and
    the parts were measured with it (gpuprof.judge.sections.rollout), else None."""
    if not ev.other_cores:
        return None
    uncontended = ((ev.env or {}).get("phases") or {}).get("uncontended")
    return uncontended if uncontended and uncontended.get("parts") else None


def _busy_words(ev: Evidence, measured: float, alone: dict) -> str:
    pace = alone.get("pace") or {}
    stretched = (f", where the policy's mean call took {1 / pace['inference']:.1f}x its fastest tenth's"
                 if pace.get("inference") else "")
    return (f", each part at the pace of its fastest calls: as measured beside other processes holding "
            f"{ev.other_cores:.1f} of {ev.cpu_count} cores{stretched}, env stepping was {measured:.0%}")


def _other_parts(phases, share: float) -> dict:
    """The shares of the window besides env stepping that the report tells apart."""
    if not phases:
        return {"rest": clamp(1.0 - share)}
    learning = phases["learning"]["share"]
    parts = phases.get("parts")
    if parts:       # measured: the rollout's other parts apart
        return {"learning": learning, **{f"rollout_{k}": v for k, v in parts.items() if k != "env" and v is not None}}
    return {"learning": learning, "rollout_rest": clamp(1.0 - share - learning)}


def _rollout_is_the_time(phases) -> bool:
    """Measured phases where collection takes longer than learning: env stepping then competes with
    the rollout's other parts, the update being the minority."""
    phases = phases or {}
    return bool(phases.get("parts")) and phases["collection"]["share"] > phases["learning"]["share"]


def _reason(env: dict, share: float, others: dict) -> str:
    what = env.get("vector_cls") or env.get("cls") or "the environment"
    if env.get("num_envs"):
        what += f" of {env['num_envs']}"
    if env.get("library") and env["library"] != "gymnasium":
        what += f", {env['library']}"
    at = f" at {env['where']}" if env.get("where") else ""
    reason = f"environment steps ({what}{at}) take {share:.0%} of the training time"
    if "rollout_inference" in others:
        reason += (f", the update {others['learning']:.0%}, policy inference {others['rollout_inference']:.0%}"
                   + (f", host conversions {others['rollout_conversions']:.0%}" if "rollout_conversions" in others
                      else "") + f" and the rest of the rollout {others['rollout_rest']:.0%}")
    elif "learning" in others:
        reason += (f", the update {others['learning']:.0%} and the rest of the rollout (policy inference, host "
                   f"work) {others['rollout_rest']:.0%}")
    return reason


def wins(finding) -> bool:
    """The largest part of the time, and past the bound from which a wait is the verdict (a lower one
    where the rollout's parts were measured: the time is then told apart in five parts)."""
    measured = finding.evidence.get("rollout_inference_share") is not None
    bound = MEASURED_BOUND if measured else INPUT_BOUND
    return finding.share >= bound and finding.share >= (finding.evidence.get("largest_other_part") or 0.0)


BOTTLENECK = Bottleneck(id=ID, label="Input-bound (environment)", tier=BY_SHARE, rules=(evaluate,), wins=wins)
