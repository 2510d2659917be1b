"""The corpus (bench/corpus/): every program says where it came from and how each fix is made by
hand, the split puts each program in the half its name decides, and the held half's scores mean
what bench/accuracy.py --corpus prints."""

import importlib.util
import json
import os

import pytest

from tests.conftest import ROOT

CORPUS = os.path.join(ROOT, "bench", "corpus")


def _module(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "bench", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


scoring = _module("corpus_accuracy")
PROGRAMS = sorted(n for n in os.listdir(CORPUS) if os.path.isfile(os.path.join(CORPUS, n, "case.json")))


def test_the_corpus_has_programs_of_distinct_shapes():
    shapes = {json.load(open(os.path.join(CORPUS, n, "case.json")))["shape"] for n in PROGRAMS}
    assert len(PROGRAMS) >= 16 and len(shapes) == len(PROGRAMS)


@pytest.mark.parametrize("name", PROGRAMS)
def test_each_program_names_its_source_and_makes_each_fix_at_one_place(name):
    with open(os.path.join(CORPUS, name, "case.json")) as handle:
        case = json.load(handle)
    assert case["source"].startswith("http") and case["licence"] and case["adapted"]
    with open(os.path.join(CORPUS, name, "train.py")) as handle:
        source = handle.read()
    assert case["edits"]
    for fix_id, replacements in case["edits"].items():
        for item in replacements:
            assert source.count(item["old"]) == 1, (fix_id, item["old"])


def test_the_split_puts_every_program_in_the_half_its_name_decides():
    with open(os.path.join(CORPUS, "split.json")) as handle:
        split = json.load(handle)
    assert sorted(split["held"] + split["calibrate"]) == PROGRAMS
    for half in ("held", "calibrate"):
        assert all(scoring.half_of(name) == half for name in split[half])


CASE = {"label": "input.cpu|compute"}


def report(verdict, *advice):
    return {"verdict": {"bottleneck": verdict},
            "advice": [{"id": i, "estimated_speedup": (lo + hi) / 2, "estimate": {"low": lo, "high": hi}}
                       for i, lo, hi in advice]}


def truth(**medians):
    return {"fixes": dict({k: {"median": v, "ratios": [v]} for k, v in medians.items()},
                          broken={"error": "edited: exit 1"})}


def test_a_top_fix_that_measured_nothing_while_another_tripled_the_speed_scores_against_gpuprof():
    """An audio pipeline whose first fix, num-workers, measured 1.0x while the feature cache measured 3x."""
    got = scoring.score(CASE, report("input.cpu", ("num-workers", 1.16, 2.98), ("cache-preprocessed", 1.3, 2.91)),
                        truth(**{"num-workers": 1.0, "cache-preprocessed": 3.1}))
    assert got["label"] is True
    assert got["top_in_range"] is False and got["best_first"] is False
    assert got["missed_big"] == []
    assert got["log_errors"] == pytest.approx([abs(__import__("math").log(2.07 / 1.0)),
                                              abs(__import__("math").log(2.105 / 3.1))])


def test_an_unoffered_fix_that_measured_twice_as_fast_is_counted_and_best_first_fails():
    got = scoring.score(CASE, report("compute", ("mixed-precision", 1.1, 1.5)),
                        truth(**{"training-threads": 13.0, "mixed-precision": 1.2}))
    assert got["missed_big"] == ["training-threads"] and got["best_first"] is False
    assert got["top_in_range"] is True


def test_where_nothing_gains_offering_nothing_is_right_and_a_fix_without_truth_is_not_judged():
    got = scoring.score(CASE, report("compute"), truth(**{"num-workers": 1.01}))
    assert got["best_first"] is True and got["top_in_range"] is None
    lines = scoring.summary({"a": got, "b": scoring.score(CASE, report("input.disk", ("pin-memory", 1.1, 1.2)),
                                                             truth(**{"pin-memory": 1.15}))})
    assert lines[0] == "label right: 1 of 2"
    assert lines[1] == "top fix's measured gain inside its range: 1 of 1"
    assert lines[2] == "best measured fix ranked first: 2 of 2"


def test_a_bf16_gain_measured_on_a_cpu_with_bf16_is_not_held_against_a_run_on_one_without():
    """The truths were measured where the CPU had avx512_bf16; on a CPU without it gpuprof rightly
    leaves mixed precision out, and scoring that as 'best fix not first' would blame the advice."""
    measured_there = dict(truth(**{"mixed-precision": 1.18, "num-workers": 0.71}), cpu_bf16=True)
    without = dict(report("compute", ("compile", 1.0, 1.2)), system={"cpu_flags": []})
    got = scoring.score(CASE, without, measured_there)
    assert got["foreign"] == ["mixed-precision"] and "mixed-precision" not in got["measured"]
    assert got["best_first"] is True                 # nothing left that gains: offering no gain is right
    assert scoring.summary({"a": got})[-1] == "truths not judged (measured on a CPU unlike this one): a: mixed-precision"
    alike = dict(report("compute", ("compile", 1.0, 1.2)), system={"cpu_flags": ["avx512_bf16"]})
    assert scoring.score(CASE, alike, measured_there)["best_first"] is False
    unknown = truth(**{"mixed-precision": 1.18})     # an older truth.json, silent about its CPU: it counts
    assert scoring.score(CASE, without, unknown)["best_first"] is False
