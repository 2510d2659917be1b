"""The bottleneck registry holds everything about a bottleneck in its own module: these checks keep
it that way (every module registered once, its id spelled in that module alone, a docs row each,
fixes addressing declared bottlenecks) and show that the declared precedence decides the verdict."""

import os
import pkgutil
import re

from gpuprof.advise import fixes
from gpuprof.judge.verdict import bottlenecks
from gpuprof.judge.verdict.bottleneck import BESIDE, BY_SHARE, FALLBACK, LEADS
from gpuprof.judge.verdict.classify import classify
from tests.unit.test_verdict_and_advice import sections

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "gpuprof")


def read(path) -> str:
    with open(path, "r", encoding="utf-8") as handle:
        return handle.read()


def declaring_module(bottleneck) -> str:
    function = bottleneck.leads or bottleneck.rules[0]
    return os.path.join(PACKAGE, *function.__module__.split(".")[1:]) + ".py"


def test_every_bottleneck_module_is_registered_once_under_its_own_id():
    modules = {name for _, name, _ in pkgutil.iter_modules(bottlenecks.__path__)}
    assert len(set(bottlenecks.ids())) == len(bottlenecks.ALL)
    for bottleneck in bottlenecks.ALL:
        module = os.path.basename(declaring_module(bottleneck))[:-3]
        assert module == bottleneck.id.replace(".", "_"), (module, bottleneck.id)
        assert module in modules
    assert modules == {b.id.replace(".", "_") for b in bottlenecks.ALL}


def test_each_bottleneck_id_is_spelled_in_its_own_module_only():
    """Every .py under gpuprof/ (the simulated GPU's scenarios and doctor included) refers to a
    bottleneck through its constant; the quoted id appears in the module that declares it."""
    ids = re.compile("[\"'](" + "|".join(re.escape(i) for i in bottlenecks.ids()) + ")[\"']")
    owners = {b.id: declaring_module(b) for b in bottlenecks.ALL}
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            for found in ids.finditer(read(path)):
                assert path == owners[found.group(1)], f"{path} spells the bottleneck id {found.group(0)}"


def test_the_grep_finds_a_spelled_id():
    ids = re.compile("[\"'](" + "|".join(re.escape(i) for i in bottlenecks.ids()) + ")[\"']")
    assert ids.search('if verdict["bottleneck"] == "input.disk":')
    assert ids.search("addresses=('comm',)")
    assert not ids.search("addresses=(bottlenecks.COMM.id,)")


def test_every_bottleneck_has_a_row_in_the_docs_and_every_fix_addresses_declared_ones():
    advice = read(os.path.join(ROOT, "docs", "advice.md"))
    for bottleneck in bottlenecks.ALL:
        assert f"| `{bottleneck.id}` |" in advice, f"{bottleneck.id} has no row in docs/advice.md"
    for fix in fixes.SPEED:
        assert fix.addresses and set(fix.addresses) <= set(bottlenecks.ids()), fix.id


def test_each_tier_declares_what_it_needs():
    for bottleneck in bottlenecks.ALL:
        assert bottleneck.tier in (LEADS, BY_SHARE, FALLBACK, BESIDE)
        assert (bottleneck.leads is not None) == (bottleneck.tier == LEADS), bottleneck.id
        assert (bottleneck.wins is not None) == (bottleneck.tier == BY_SHARE), bottleneck.id
        assert bottleneck.tier == LEADS or bottleneck.rules, bottleneck.id


OOM = {"kind": "exception", "how": "the program raised OutOfMemoryError after 3 steps"}
SHM = {"how": "a DataLoader worker could not put a batch in shared memory", "shm_bytes": 2 << 20}


def test_out_of_memory_leads_and_keeps_the_step_verdict_as_before():
    data = dict(sections(wait=0.8, cpu=0.95), memory={"oom": OOM, "shm": SHM})
    step = classify(sections(wait=0.8, cpu=0.95))["verdict"]
    judged = classify(data)
    assert step["bottleneck"] == bottlenecks.INPUT_CPU.id
    assert judged["verdict"]["bottleneck"] == bottlenecks.MEMORY_OOM.id
    assert judged["verdict"]["evidence"]["before"] == step["summary"]
    assert classify(dict(data, memory={"shm": SHM}))["verdict"]["bottleneck"] == bottlenecks.MEMORY_SHM.id


def test_a_run_with_nothing_to_judge_still_gets_its_memory_verdict():
    judged = classify(dict(sections(), memory={"oom": OOM}), "the program ran no training step")
    assert judged["verdict"]["bottleneck"] == bottlenecks.MEMORY_OOM.id


def test_a_waiting_rank_gets_comm_only_over_a_verdict_that_is_not_its_own():
    rank = {"rank": 0, "waiting_share": 0.4, "straggler": {"rank": 1}}
    compute = classify(dict(sections(wait=0.01), rank=rank))["verdict"]
    assert compute["bottleneck"] == bottlenecks.COMM.id and "rank 1" in compute["reason"]
    starved = classify(dict(sections(wait=0.8, cpu=0.95), rank=rank))["verdict"]
    assert starved["bottleneck"] == bottlenecks.INPUT_CPU.id        # its own wait is larger than the wait on others
    straggler = classify(dict(sections(wait=0.01), rank=dict(rank, rank=1)))["verdict"]
    assert straggler["bottleneck"] == bottlenecks.COMPUTE.id


def test_the_largest_removable_share_wins_over_a_fallback():
    judged = classify(sections(wait=0.45, cpu=0.95))
    assert judged["verdict"]["bottleneck"] == bottlenecks.INPUT_CPU.id
    assert classify(sections(wait=0.05))["verdict"]["bottleneck"] == bottlenecks.COMPUTE.id
