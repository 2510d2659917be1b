"""What the environment fixes share: whether the run's env stepping is a bottleneck worth fixing
(the verdict, or a finding beside it), and the env in gymnasium's words."""

from gpuprof.analysis import bottlenecks


def env_finding(s):
    """The environment bottleneck's verdict or finding in this run, else None."""
    for finding in (s.verdict,) + tuple(s.findings):
        if finding.get("bottleneck") == bottlenecks.INPUT_ENV.id:
            return finding
    return None


def env_name(env: dict) -> str:
    """'SyncVectorEnv of 4 CartPole-v1', 'CartPole-v1', or the env's class."""
    name = env.get("vector_cls") or env.get("cls") or "the environment"
    if env.get("num_envs"):
        return f"{name} of {env['num_envs']} {env.get('spec') or 'environments'}"
    return env.get("spec") or name


def env_id(env: dict) -> str:
    return repr(env.get("spec") or "YourEnv-v0")
