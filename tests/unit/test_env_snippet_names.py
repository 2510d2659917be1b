"""Every name the environment fixes' snippets use exists in the installed library: Stable-
Baselines3's (make_vec_env and its keyword arguments, SubprocVecEnv, the VecEnv methods, the
algorithm's n_steps) and gymnasium's (make_vec and its keywords, AsyncVectorEnv, SyncVectorEnv,
the vectorisation modes). The snippets are built by the fixes themselves and read with `ast`: each
call's function is resolved and each keyword it passes must be a parameter it names."""

import ast
import importlib
import inspect
import re

import pytest

from gpuprof.advise.fixes import async_vector_env, more_envs_per_call, subproc_vec_env, vectorised_env
from tests.unit.fixes.env_cases import env_evidence, env_verdict, sb3_evidence

#: Where a bare name of a snippet comes from, per library.
SB3_NAMES = {"make_vec_env": "stable_baselines3.common.env_util.make_vec_env",
             "SubprocVecEnv": "stable_baselines3.common.vec_env.SubprocVecEnv",
             "DummyVecEnv": "stable_baselines3.common.vec_env.DummyVecEnv",
             "PPO": "stable_baselines3.PPO"}
GYMNASIUM_NAMES = {"gymnasium": "gymnasium"}
#: Names the snippets leave to the program (its own env maker, wrapper and policy).
THE_PROGRAMS = {"envs", "model", "policy", "make_env", "Renderer", "Downsize", "i", "range", "n_steps", "num_steps",
                "CartPole", "python"}


def resolve(dotted: str):
    """The object a dotted name stands for, importing the longest module prefix."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(dotted)


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def code_lines(snippet: str) -> str:
    """The snippet's Python: command lines and comments left out."""
    return "\n".join(line for line in snippet.splitlines() if not line.startswith("python "))


def checked_calls(snippet: str, names: dict) -> list:
    """(function, keywords) of every call the snippet makes of a library's name, each checked."""
    checked = []
    for node in ast.walk(ast.parse(code_lines(snippet))):
        if isinstance(node, ast.ImportFrom):
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name), f"{node.module} has no {alias.name}"
        if not isinstance(node, ast.Call):
            continue
        name = dotted(node.func)
        head = (name or "").split(".")[0]
        if head in THE_PROGRAMS or name is None:
            continue
        target = resolve(names[head] + name[len(head):])
        parameters = inspect.signature(target).parameters
        for keyword in node.keywords:
            assert keyword.arg in parameters, f"{name} takes no {keyword.arg}"
            named = parameters[keyword.arg]
            assert named.kind is not inspect.Parameter.VAR_KEYWORD
        checked.append((name, [k.arg for k in node.keywords]))
    return checked


def mentioned(snippet: str, root: str) -> list:
    """Dotted names of the library a snippet's comments mention, each resolved."""
    found = re.findall(rf"\b{root}(?:\.\w+)+", snippet)
    for name in found:
        resolve(name)
    return found


def test_the_sb3_snippets_name_only_what_stable_baselines3_has():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import VecEnv
    ev, s = sb3_evidence(0.6), env_verdict()
    subproc = subproc_vec_env.build(ev, s)["snippet"]
    calls = dict(checked_calls(subproc, SB3_NAMES))
    assert set(calls["make_vec_env"]) == {"n_envs", "wrapper_class", "vec_env_cls"}
    more = more_envs_per_call.build(ev, s)["snippet"]
    calls = dict(checked_calls(more, SB3_NAMES))
    assert "n_envs" in calls["make_vec_env"] and calls["PPO"] == ["n_steps"]
    rewrite = vectorised_env.build(ev, s)["snippet"]
    assert mentioned(rewrite, "stable_baselines3") == ["stable_baselines3.common.vec_env.VecEnv"]
    for method in re.search(r"whose (\S+) computes", rewrite).group(1).split("/"):
        assert callable(getattr(VecEnv, method)), method
    # A DummyVecEnv the program built itself: SubprocVecEnv in its place, made from the same list.
    built_by_hand = sb3_evidence(0.6, made_with=None, maker=None)
    assert dict(checked_calls(subproc_vec_env.build(built_by_hand, s)["snippet"], SB3_NAMES)) == {"SubprocVecEnv": []}


def test_the_gymnasium_snippets_name_only_what_gymnasium_has():
    gymnasium = pytest.importorskip("gymnasium")
    ev, s = env_evidence(0.6), env_verdict()
    snippets = [async_vector_env.build(ev, s)["snippet"], vectorised_env.build(ev, s)["snippet"],
                more_envs_per_call.build(ev, s)["snippet"]]
    calls = []
    for snippet in snippets:
        uncommented = "\n".join(line.lstrip("# ").replace("or: ", "") if "gymnasium." in line else line
                                for line in snippet.splitlines())
        calls += checked_calls(uncommented, GYMNASIUM_NAMES)
    assert ("gymnasium.make_vec", ["num_envs", "vectorization_mode"]) in calls
    assert {"gymnasium.vector.AsyncVectorEnv", "gymnasium.vector.SyncVectorEnv"} <= {name for name, _ in calls}
    modes = set(re.findall(r'vectorization_mode="(\w+)"', "\n".join(snippets)))
    assert modes == {"async", "vector_entry_point"}
    from gymnasium.envs.registration import VectorizeMode
    assert modes <= {mode.value for mode in VectorizeMode}
    assert gymnasium.vector.VectorEnv is not None
