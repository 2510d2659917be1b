"""The efficiency section (judge/sections/efficiency.py, judge/sections/peaks.py) from hand-made events: the
peak's order of trust (given, measured, the dense data-sheet figure, unknown), MFU with its inputs,
energy per step from NVML's counter, GPU-hours and their idle part, the money; and its words in
every format, the gate's --min-mfu and `try`'s MFU change."""

import pytest

from gpuprof.judge.sections.efficiency import efficiency_section, resolve_peak
from gpuprof.judge.sections.peaks import cached_peak, dtype_key, known_peak, remember_peak
from gpuprof.gate.decide import FAIL, MISSING, PASS, decide
from gpuprof.present.render.efficiency_text import rows
from gpuprof.present.render.try_text import mfu_lines

STEPS = {"pid": 1, "median_step_s": 0.1, "measured": 50, "batch_size": 32, "window_s": 5.0}
EVENT = {"k": "flops", "pid": 1, "flops": 4e13, "by_op": {"mm": 4e13}, "by_dtype": {"bfloat16": 4e13},
         "uncounted": {}, "step": 3, "seconds": 0.3, "device": "cuda:0"}
H100 = {"name": "NVIDIA H100 80GB HBM3", "energy_j": 3500.0, "figures_over": "steps", "util_gpu_run": 0.75}


def section(event=EVENT, gpus=(H100,), inputs=None, advice=(), duration=3600.0):
    return efficiency_section([event] if event else [], STEPS, list(gpus), inputs or {}, list(advice), duration)


def test_the_data_sheet_peak_is_the_dense_figure_not_the_sparse_one():
    assert known_peak("NVIDIA H100 80GB HBM3", "BF16")["tflops"] == 989.4       # 1979 is 2:4 sparsity
    assert known_peak("NVIDIA H100 PCIe", "BF16")["tflops"] == 756.0
    assert known_peak("NVIDIA A100-SXM4-80GB", "TF32")["tflops"] == 156.0
    assert known_peak("Tesla T4", "BF16") is None                                 # no BF16 tensor cores
    assert known_peak("Some Future GPU", "BF16") is None
    assert dtype_key("float32", tf32=True) == "TF32" and dtype_key("bfloat16") == "BF16"


def test_mfu_against_the_table_with_its_inputs_and_source():
    got = section()
    assert got["flops_per_step"] == 4e13 and got["counted"]["coverage"] == "complete"
    assert got["achieved_tflops"] == pytest.approx(400.0)
    assert got["peak"]["source"] == "data sheet: H100 SXM dense BF16"
    assert got["mfu"] == pytest.approx(400.0 / 989.4, abs=1e-4)


def test_the_users_peak_wins_and_unknown_says_unknown():
    given = {"peak": {"tflops": 500.0, "source": "given (--peak-tflops)"}}
    assert section(inputs=given)["mfu"] == pytest.approx(0.8)
    unknown = section(gpus=[dict(H100, name="Mystery GPU")])
    assert unknown["peak"]["source"] == "unknown" and unknown["mfu"] is None
    assert resolve_peak(None, [], "float32", None, "cpu") == {"tflops": None, "source": "unknown", "dtype": "FP32"}
    text = dict(rows({"efficiency": unknown}))["MFU"]
    assert text.startswith("unknown") and "--peak-tflops" in text


def test_a_float32_conv_net_on_a_gpu_is_measured_against_the_tf32_peak_cudnn_runs_it_at():
    """cuDNN runs float32 convolutions in TF32 by default; torch runs float32 matmuls in FP32 unless
    allowed. An H200 read a ResNet's MFU as 123% of a measured FP32 peak; against TF32 it is 12.7%."""
    h200 = [dict(H100, name="NVIDIA H200")]
    model = {"flags": {"allow_tf32": False, "cudnn_allow_tf32": True}}
    measured_fp32 = {"tflops": 51.0, "source": "measured (gpuprof doctor)", "dtype": "FP32"}
    convs = {"convolution": 3e11, "convolution_backward": 6e11, "addmm": 1e6}
    peak = resolve_peak(measured_fp32, h200, "float32", model, "cuda:0", by_op=convs)
    assert peak["dtype"] == "TF32" and peak["tflops"] == pytest.approx(494.7, rel=1e-3)
    half = resolve_peak(None, h200, "float32", model, "cuda:0", by_op={"convolution": 1e12, "mm": 1e12})
    assert half["tflops"] == pytest.approx(2e12 / (1e12 / 494.7e12 + 1e12 / 67e12) / 1e12, rel=1e-3)
    assert "TF32 50%" in half["source"] and "FP32 50%" in half["source"]
    off = {"flags": {"allow_tf32": False, "cudnn_allow_tf32": False}}
    assert resolve_peak(measured_fp32, h200, "float32", off, "cuda:0", by_op=convs) == measured_fp32
    given = {"tflops": 100.0, "source": "given (--peak-tflops)"}
    assert resolve_peak(given, h200, "float32", model, "cuda:0", by_op=convs)["tflops"] == 100.0
    assert resolve_peak(None, [], "float32", model, "cpu", by_op=convs)["dtype"] == "FP32"


def test_a_measured_peak_is_cached_per_device_model_and_dtype(tmp_path):
    path = str(tmp_path / "peaks.json")
    assert cached_peak("CPU X", "FP32", 4, path=path) is None
    remember_peak("CPU X", "FP32", 0.25, "matmul benchmark, 4 cores", 4, path=path)
    assert cached_peak("CPU X", "FP32", 4, path=path) == {"tflops": 0.25,
                                                          "source": "measured (matmul benchmark, 4 cores)"}
    assert cached_peak("CPU X", "FP32", 2, path=path) is None and cached_peak("CPU X", "BF16", 4, path=path) is None


def test_energy_per_step_and_sample_from_the_nvml_counter_over_the_steps():
    energy = section()["energy"]
    assert energy["j_per_step"] == pytest.approx(3500.0 / 50)
    assert energy["j_per_sample"] == pytest.approx(3500.0 / 50 / 32)
    assert "NVML" in energy["source"]
    cpu = section(gpus=(), event=dict(EVENT, device="cpu"))["energy"]
    assert cpu == {"j_per_step": None, "j_per_sample": None, "source": "not measured"}
    rapl = section(gpus=(), inputs={"host_energy": {"joules": 720.0, "seconds": 3600.0, "zones": "intel-rapl:0"}})
    assert rapl["energy"]["j_per_step"] == pytest.approx(0.2 * 0.1) and "RAPL" in rapl["energy"]["source"]


def test_idle_gpu_hours_cost_and_each_fixs_saving():
    fix = {"id": "some-fix", "estimated_speedup": 2.0}
    got = section(gpus=(H100, dict(H100, util_gpu_run=0.25)), inputs={"price_per_hour": 4.0}, advice=[fix])
    assert got["hours"] == pytest.approx(2.0) and got["devices"] == 2
    assert got["idle_share"] == pytest.approx(0.5) and got["idle_hours"] == pytest.approx(1.0)
    assert got["cost"] == pytest.approx(8.0) and got["idle_cost"] == pytest.approx(4.0)
    # the steps' window (5 s of the hour) at half the time
    assert got["savings"] == [{"fix": "some-fix", "speedup": 2.0, "saving": pytest.approx(8.0 * 5 / 3600 / 2, rel=1e-3)}]
    assert "per run like this one" in dict(rows({"efficiency": got}))["cost"]


def test_a_skipped_count_says_why_and_nothing_known_gives_no_section():
    skipped = section(event={"k": "flops", "pid": 1, "skipped": "the model is compiled (...)"}, gpus=())
    assert skipped["flops_per_step"] is None and "compiled" in dict(rows({"efficiency": skipped}))["FLOPs per step"]
    assert "MFU" not in dict(rows({"efficiency": skipped}))
    assert section(event=None, gpus=()) is None


def test_an_uncounted_heavy_op_makes_the_coverage_partial():
    got = section(event=dict(EVENT, uncounted={"linalg_inv_ex": 2}))
    assert got["counted"]["coverage"] == "partial"
    assert "linalg_inv_ex" in dict(rows({"efficiency": got}))["FLOPs per step"]


def report_with(mfu_section):
    return {"verdict": {"bottleneck": "compute", "basis": "steps"}, "steps": {"measured": 10},
            "efficiency": mfu_section}


def test_the_gate_holds_mfu_like_a_threshold():
    good = report_with(section())
    assert decide(good, {"min_mfu": 0.3}).checks[0].status == PASS
    assert decide(good, {"min_mfu": 0.5}).checks[0].status == FAIL
    unknown = report_with(section(gpus=[dict(H100, name="Mystery GPU")]))
    check = decide(unknown, {"min_mfu": 0.3}).checks[0]
    assert check.status == MISSING and "peak is unknown" in check.detail


def test_try_shows_each_variants_mfu_change_beside_its_speedup():
    rows_ = [{"label": "baseline", "achieved_tflops": 100.0, "mfu": 0.1},
             {"label": "bf16-autocast", "achieved_tflops": 150.0, "mfu": 0.15, "speedup": 1.5},
             {"label": "no-count", "speedup": 1.1}]
    assert mfu_lines(rows_) == ["bf16-autocast: MFU 10.0% -> 15.0%, 1.50x the baseline's FLOPs per second "
                                "(speed-up 1.50x)"]
    assert mfu_lines([{"label": "baseline"}, rows_[1]]) == []


def test_doctor_measures_the_peak_caches_it_and_sets_it_beside_the_data_sheet(tmp_path, monkeypatch):
    import json
    import types
    from gpuprof.commands.doctor.peak_check import measure_peaks, peaks_section
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    answers = {"bfloat16": 700.0, "float32": 50.0}

    def fake_run(argv, **kwargs):
        dtype = argv[4]
        return types.SimpleNamespace(stdout=json.dumps({"tflops": answers[dtype], "device_name": "NVIDIA H100 PCIe"}))

    peaks = measure_peaks("python", on_gpu=True, run=fake_run)
    assert [(p["key"], p["tflops"]) for p in peaks] == [("BF16", 700.0), ("FP32", 50.0)]
    assert cached_peak("NVIDIA H100 PCIe", "BF16")["tflops"] == 700.0
    text = [line.text for line in peaks_section(peaks).lines]
    assert "700 TFLOPS dense BF16 measured (93% of the data sheet: H100 PCIe dense BF16 756)" in text[0]


def test_rapl_readings_give_joules_across_a_counter_wrap(tmp_path):
    from gpuprof.capture.samplers import rapl
    zone = tmp_path / "intel-rapl:0"
    zone.mkdir()
    (zone / "max_energy_range_uj").write_text("1000000\n")
    (zone / "energy_uj").write_text("900000\n")
    first = rapl.read(str(tmp_path / "intel-rapl:*"))
    (zone / "energy_uj").write_text("100000\n")
    assert rapl.joules_between(first, rapl.read(str(tmp_path / "intel-rapl:*"))) == pytest.approx(0.2)
    assert rapl.read(str(tmp_path / "nothing:*")) is None


def test_a_try_row_keeps_the_median_mfu_of_its_counted_runs():
    from gpuprof.commands.experiments.results import _efficiency
    reports = [{"efficiency": {"achieved_tflops": 1.0, "mfu": 0.1}}, {"efficiency": {"achieved_tflops": 3.0, "mfu": 0.3}},
               {"efficiency": {"achieved_tflops": 2.0, "mfu": 0.2}}, {}]
    assert _efficiency(reports) == {"achieved_tflops": 2.0, "mfu": 0.2}
    assert _efficiency([{}, {"efficiency": {"flops_per_step": None}}]) == {}
