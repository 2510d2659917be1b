"""The float32 precision flags as the model probe reads them: the new per-backend API first
(torch >= 2.9), each flag on its own, and the tf32 advice that reads them."""

import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

from gpuprof.capture.probes.model_facts import _flags


def _raises(message):
    def getter(*args):
        raise RuntimeError(message)
    return getter


class Legacy:
    """A backend namespace whose legacy `allow_tf32` read raises, as torch's does once the new API
    was set (or a plain value)."""

    def __init__(self, allow_tf32=None, fp32_precision=None, fails=False):
        self._allow, self._fails = allow_tf32, fails
        if fp32_precision is not None:
            self.fp32_precision = fp32_precision

    @property
    def allow_tf32(self):
        if self._fails:
            raise RuntimeError("you have used mix of the legacy and new APIs to set the TF32 status")
        return self._allow


def fake_torch(matmul, conv, precision="highest", benchmark=True):
    getter = precision if callable(precision) else (lambda: precision)
    return SimpleNamespace(get_float32_matmul_precision=getter,
                           backends=SimpleNamespace(cuda=SimpleNamespace(matmul=matmul),
                                                    cudnn=SimpleNamespace(conv=conv, allow_tf32=True, benchmark=benchmark)))


def test_the_new_api_set_to_tf32_reads_as_tf32_though_the_legacy_reads_raise():
    torch = fake_torch(Legacy(fails=True, fp32_precision="tf32"), SimpleNamespace(fp32_precision="tf32"),
                       precision=_raises("checking the matmul precision without a specific backend name"))
    assert _flags(torch) == {"matmul_precision": "high", "allow_tf32": True, "cudnn_allow_tf32": True,
                             "cudnn_benchmark": True, "precision_api": "fp32_precision"}


def test_the_new_api_set_to_ieee_reads_as_highest():
    flags = _flags(fake_torch(Legacy(fails=True, fp32_precision="ieee"), SimpleNamespace(fp32_precision="ieee")))
    assert flags["matmul_precision"] == "highest" and flags["allow_tf32"] is False
    assert flags["cudnn_allow_tf32"] is False


def test_an_unset_new_api_falls_back_to_the_legacy_flags():
    flags = _flags(fake_torch(Legacy(allow_tf32=True, fp32_precision="none"), SimpleNamespace(fp32_precision="tf32"),
                              precision="high"))
    assert flags["matmul_precision"] == "high" and flags["allow_tf32"] is True


def test_an_older_torch_without_the_new_api_reads_the_legacy_flags():
    flags = _flags(fake_torch(Legacy(allow_tf32=False), SimpleNamespace()))
    assert flags == {"matmul_precision": "highest", "allow_tf32": False, "cudnn_allow_tf32": True,
                     "cudnn_benchmark": True, "precision_api": "legacy"}


def test_one_flag_that_cannot_be_read_loses_only_itself():
    flags = _flags(fake_torch(Legacy(fails=True, fp32_precision="none"), SimpleNamespace(fp32_precision="tf32"),
                              precision=_raises("mixed")))
    assert "matmul_precision" not in flags and "allow_tf32" not in flags
    assert flags["cudnn_allow_tf32"] is True and flags["cudnn_benchmark"] is True


@pytest.mark.slow  # a fresh interpreter that imports torch: the slow tier
def test_real_torch_with_the_new_api():
    """In a fresh interpreter (the flags are global): torch's own behaviour, not a stand-in."""
    pytest.importorskip("torch")
    code = textwrap.dedent("""
        import json, torch
        from gpuprof.capture.probes.model_facts import _flags
        if not hasattr(torch.backends.cuda.matmul, "fp32_precision"):
            print(json.dumps(None)); raise SystemExit
        before = _flags(torch)
        torch.backends.cuda.matmul.fp32_precision = "tf32"
        print(json.dumps([before, _flags(torch)]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    found = __import__("json").loads(out.stdout.strip().splitlines()[-1])
    if found is None:
        pytest.skip("this torch has no fp32_precision API")
    before, after = found
    assert before["matmul_precision"] == "highest" and before["allow_tf32"] is False
    assert after["matmul_precision"] == "high" and after["allow_tf32"] is True


def test_the_tf32_advice_speaks_the_api_the_program_uses():
    from gpuprof.advise.fixes import tf32
    from tests.unit.fixes.cases import evidence, situation

    def model(api):
        return {"device": "cuda:0", "dtypes": {"float32": 1000}, "autocast": None, "capability": [8, 0],
                "flags": {"matmul_precision": "highest", "allow_tf32": False, "precision_api": api}}

    new = tf32.build(evidence(model=model("fp32_precision"), gpu=True, gpu_util=0.95), situation("compute", 0.95))
    old = tf32.build(evidence(model=model("legacy"), gpu=True, gpu_util=0.95), situation("compute", 0.95))
    assert new is not None and "fp32_precision = 'tf32'" in new["snippet"] and "set_float32" not in new["snippet"]
    assert old is not None and "torch.set_float32_matmul_precision('high')" in old["snippet"]
