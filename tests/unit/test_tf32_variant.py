"""`try`'s tf32 variant sets TF32 through one precision API: the per-backend `fp32_precision` where
torch has it (2.9 and later, as the tf32 fix's snippet does), the legacy `allow_tf32` flags before.
Torch raises on a legacy read once the two APIs disagree, so a variant that mixed them could break
a program that uses the new one."""

import json
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

from gpuprof.capture.probes import model_side


class Backend:
    """A torch.backends namespace that records which attributes were set."""

    def __init__(self, **values):
        object.__setattr__(self, "set", [])
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        self.set.append(name)
        object.__setattr__(self, name, value)


def fake_torch(new_api: bool):
    extra = {"fp32_precision": "none"} if new_api else {}
    matmul = Backend(allow_tf32=False, **extra)
    conv = Backend(**({"fp32_precision": "ieee"} if new_api else {}))
    cudnn = Backend(allow_tf32=False, benchmark=False, conv=conv)
    return SimpleNamespace(backends=SimpleNamespace(cuda=SimpleNamespace(matmul=matmul), cudnn=cudnn))


@pytest.fixture
def emitted(monkeypatch):
    events = []
    monkeypatch.setattr(model_side.runtime, "emit", events.append)
    return events


def test_a_torch_with_the_new_api_gets_tf32_through_it_and_the_legacy_flags_stay_untouched(emitted):
    torch = fake_torch(new_api=True)
    model_side._set_flags(torch, {"allow_tf32": True})
    backends = torch.backends
    assert backends.cuda.matmul.fp32_precision == "tf32" and backends.cudnn.conv.fp32_precision == "tf32"
    assert backends.cuda.matmul.set == ["fp32_precision"] and backends.cudnn.set == []
    assert emitted[-1]["applied"] == {"allow_tf32": True} and emitted[-1]["precision_api"] == "fp32_precision"


def test_an_older_torch_gets_the_legacy_flags(emitted):
    torch = fake_torch(new_api=False)
    model_side._set_flags(torch, {"allow_tf32": True, "cudnn_benchmark": True})
    assert torch.backends.cuda.matmul.allow_tf32 is True and torch.backends.cudnn.allow_tf32 is True
    assert torch.backends.cudnn.benchmark is True
    assert emitted[-1]["applied"] == {"allow_tf32": True, "cudnn_benchmark": True}
    assert emitted[-1]["precision_api"] == "legacy"


@pytest.mark.slow  # a fresh interpreter that imports torch: the slow tier
def test_real_torch_the_variant_leaves_the_state_the_fixs_snippet_leaves():
    """In fresh interpreters (the flags are global): the variant, then a program that uses the new
    API, against the tf32 fix's own snippet; torch's behaviour, not a stand-in."""
    pytest.importorskip("torch")
    code = textwrap.dedent("""
        import json, sys, torch
        from gpuprof.capture.probes import model_side
        if model_side.precision_api(torch) != "fp32_precision":
            print(json.dumps(None)); raise SystemExit

        def state():
            b = torch.backends
            try:
                legacy = b.cuda.matmul.allow_tf32
            except RuntimeError:
                legacy = "raises"
            return [b.cuda.matmul.fp32_precision, b.cudnn.conv.fp32_precision, legacy]

        model_side.runtime.emit = lambda event: None
        if sys.argv[1] == "variant":
            model_side._set_flags(torch, {"allow_tf32": True})
        else:
            exec("torch.backends.cuda.matmul.fp32_precision = 'tf32'\\n"
                 "torch.backends.cudnn.conv.fp32_precision = 'tf32'")
        after = state()
        torch.backends.cuda.matmul.fp32_precision = "ieee"      # the program's own choice, new API
        print(json.dumps([after, state(), torch.get_float32_matmul_precision()]))
    """)

    def run(which):
        out = subprocess.run([sys.executable, "-c", code, which], capture_output=True, text=True, timeout=120,
                             check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    variant = run("variant")
    if variant is None:
        pytest.skip("this torch has no fp32_precision API")
    assert variant == run("snippet")
    after, then, legacy_precision = variant
    assert after[:2] == ["tf32", "tf32"]
    # The program's new-API setting then reads back without a mix: the legacy flags were never set.
    assert then == ["ieee", "tf32", False] and legacy_precision == "highest"
