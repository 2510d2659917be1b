from gpuprof.advise.fixes import pin_memory
from tests.unit.fixes.cases import evidence, gpu, situation

PAGEABLE = {"count": 100, "bytes": 4e9, "pageable_bytes": 4e9, "seconds": 3.0}


def test_pageable_copies_get_pinned_memory_and_non_blocking_copies():
    built = pin_memory.build(evidence(copies=PAGEABLE, copy_share=0.3, **gpu()), situation("transfer.h2d", 0.3))
    assert built["change"] == {"pin_memory": True}
    assert "non_blocking=True" in built["snippet"] and "pin_memory False -> True" in built["detail"]
    assert abs(built["estimated_speedup"] - 1 / (1 - 0.3 * 0.6)) < 1e-9


def test_copies_already_pinned_need_nothing():
    pinned = dict(PAGEABLE, pageable_bytes=0)
    assert pin_memory.build(evidence(copies=pinned, copy_share=0.3, **gpu()), situation("transfer.h2d", 0.3)) is None


def test_try_keeps_it_at_the_loader_line():
    assert pin_memory.FIX.keep({"pin_memory": True}, "train.py:42") == "at train.py:42: DataLoader(..., pin_memory=True)"
