"""Names a user can find: time spent in a generator expression, a lambda or a comprehension is
named by the user's function around it, with the anonymous frame shown inside it, not instead."""

import sys

from gpuprof.judge.verdict.bottlenecks import setup
from gpuprof.judge.verdict.evidence import Evidence
from gpuprof.judge.sections.host_time import owner
from gpuprof.judge.sections.startup import analyse_startup, where_words
from gpuprof.capture.probes import startup as probe
from gpuprof.record import kinds, startup_parts as parts

USER = "/home/me/train.py"
TRAIN = """\
def tokenize_corpus(lines):
    words = list(
        (seen.append(part_of(sys._getframe())), line.split())
        for line in lines)
    return words
"""


def test_the_start_up_probe_keeps_the_named_function_around_a_generator_expression():
    seen = []
    namespace = {"sys": sys, "seen": seen, "part_of": probe.part_of}
    exec(compile(TRAIN, USER, "exec"), namespace)
    namespace["tokenize_corpus"](["a b"])
    part, where = seen[0]
    assert where == "<genexpr> (/home/me/train.py:3)<tokenize_corpus (/home/me/train.py:2)", where
    assert part == parts.DATASET              # named for its corpus, which <genexpr> is not


def test_a_named_function_alone_is_recorded_as_before():
    namespace = {"sys": sys}
    exec(compile("def build():\n    return sys._getframe()\n", USER, "exec"), namespace)
    assert probe.part_of(namespace["build"]()) == (parts.YOUR_CODE, "build (/home/me/train.py:2)")


def _startup(counts):
    event = {"k": kinds.STARTUP_SAMPLES, "t": 110.0, "t0": 101.0, "n": 180, "first_step": True, "counts": counts,
             "pid": 7}
    return analyse_startup([event], {"start_monotonic": 100.0, "duration_s": 16.0, "pid": 7})


def test_the_start_up_names_the_function_and_shows_the_generator_expression_inside_it():
    section = _startup({"dataset|<genexpr> (train.py:6)<tokenize_corpus (train.py:9)": 4.0,
                        "dataset|tokenize_corpus (train.py:10)": 1.0, "imports|<module> (train.py:1)": 2.0})
    where = section["where"]
    assert (where["function"], where["line"], where["inside"], where["seconds"]) == \
        ("tokenize_corpus", "train.py:6", "<genexpr>", 5.0)
    assert where_words(where) == "tokenize_corpus (a generator expression at train.py:6)"
    finding = setup.evaluate(Evidence(startup=section))
    assert "most in tokenize_corpus (a generator expression at train.py:6)" in finding.reason, finding.reason
    assert "<genexpr> at" not in finding.reason


def test_a_record_from_before_keeps_its_words_and_a_bare_comprehension_says_what_it_is():
    section = _startup({"dataset|build_dataset (train.py:17)": 5.0})
    assert section["where"]["function"] == "build_dataset" and "inside" not in section["where"]
    assert where_words(section["where"]) == "build_dataset at train.py:17"
    bare = _startup({"your code|<listcomp> (train.py:6)": 5.0})["where"]
    assert where_words(bare) == "a list comprehension at train.py:6"


def test_the_step_samplers_hot_spot_is_the_named_function_around_the_comprehension():
    assert owner("<genexpr> (train.py:4)<tokenize_corpus (train.py:1)<main (train.py:20)") == \
        ("tokenize_corpus (train.py:1)", True)
    assert owner("<lambda> (train.py:8)<step (train.py:30)")[0] == "step (train.py:30)"
