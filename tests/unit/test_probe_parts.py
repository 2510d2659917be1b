"""The probes' pure parts: bounded streams, selections, copy bookkeeping, the post-import hook."""

import sys

import pytest

from gpuprof.probes.h5 import chunks_touched
from gpuprof.probes.post_import import PostImportHook
from gpuprof.probes.stream import Stream


def test_stream_keeps_the_first_items_then_sums_blocks():
    out = []
    stream = Stream("batch", {"l": "1:1"}, full=3, block=4, emit=out.append)
    for i in range(12):
        stream.add(float(i), w=1.0)
    stream.flush()
    assert [e.get("n", 1) for e in out] == [1, 1, 1, 4, 4, 1]
    assert sum(e["w"] for e in out) == 12.0                 # totals exact
    assert out[3] == {"k": "batch", "l": "1:1", "n": 4, "t0": 3.0, "t": 6.0, "w": 4.0, "w_max": 1.0}


@pytest.mark.parametrize("key, expected", [
    (5, 1 * 1),                              # one sample: one chunk along axis 0, one along axis 1
    (slice(0, 64), 1),
    (slice(60, 70), 2),
    (slice(0, 128, 2), 2),
    ([1, 2, 70, 200], 3),
    ((slice(None), slice(0, 10)), 4 * 1),
    ((Ellipsis, 3), 4),
])
def test_chunks_touched_by_a_selection(key, expected):
    assert chunks_touched(key, shape=(256, 32), chunks=(64, 32)) == expected


def test_post_import_hook_runs_after_the_module_executes(tmp_path, monkeypatch):
    (tmp_path / "watched_mod_xyz.py").write_text("VALUE = 41\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    hook = PostImportHook({"watched_mod_xyz": lambda m: seen.append(m.VALUE + 1)})
    hook.install()
    try:
        import watched_mod_xyz
        assert seen == [42]
        assert type(watched_mod_xyz.__spec__.loader).__name__ == "SourceFileLoader"  # real loader kept
        assert "exec_module" not in vars(watched_mod_xyz.__spec__.loader)
        assert hook not in sys.meta_path                                          # done: removed
    finally:
        hook.remove()
        sys.modules.pop("watched_mod_xyz", None)


def test_post_import_hook_survives_a_find_spec_without_import(tmp_path, monkeypatch):
    import importlib.util
    (tmp_path / "watched_mod_spec.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    hook = PostImportHook({"watched_mod_spec": lambda m: seen.append(m.VALUE)})
    hook.install()
    try:
        assert importlib.util.find_spec("watched_mod_spec") is not None     # looks, does not import
        assert seen == []
        import watched_mod_spec  # noqa: F401
        assert seen == [1]
    finally:
        hook.remove()
        sys.modules.pop("watched_mod_spec", None)


def test_post_import_hook_swallows_a_failing_callback(tmp_path, monkeypatch):
    (tmp_path / "watched_mod_abc.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    hook = PostImportHook({"watched_mod_abc": lambda m: 1 / 0})
    hook.install()
    try:
        import watched_mod_abc
        assert watched_mod_abc.VALUE == 1
    finally:
        hook.remove()
        sys.modules.pop("watched_mod_abc", None)
