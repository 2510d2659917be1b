"""The input's cost when no step waits: a compute verdict whose workers take cores the training
uses says what they cost, offers the fixes that make them cheaper after the compute fixes, and
never says the input needs nothing."""

import pytest

from gpuprof.advise.rank import advise
from gpuprof.advise.wording import next_steps_for_compute
from gpuprof.judge.verdict.classify import classify
from tests.unit.test_verdict_and_advice import sections


def busy_workers(producer_cores=0.6, cores_busy=2.0, wait=0.01, idle=0.05, gpus=None, training_wait=None):
    """Two workers that keep up (the loop waits `wait`) while taking `producer_cores` of the job's
    busy cores; their producing time is not spent waiting for a core, so the contended rule stays out."""
    data = sections(wait=wait, workers=2, cpu=0.9, cores_busy=cores_busy, idle=idle, gpus=gpus)
    producer = data["dataloaders"][0]["producer"]
    producer["cpu_s"] = producer_cores * data["steps"]["window_s"]
    producer["wall_s"] = producer["cpu_s"] / 0.9
    producer["system_cpu_s"] = 0.0
    producer["runqueue_s"] = 0.05 * producer["wall_s"]
    if training_wait is not None:
        data["steps"]["training_cpu"] = {"run_s": 10.0, "wait_s": 1.0, "wait_share": training_wait, "threads": 3}
    return data


def advised(data):
    result = classify(data)
    return result["verdict"], advise(result["evidence"], result["verdict"], result["findings"])


def test_workers_taking_a_notable_share_of_the_cores_state_the_inputs_cost():
    verdict, advice = advised(busy_workers(producer_cores=0.6))      # 30% of the 2 busy cores
    evidence = verdict["evidence"]
    assert verdict["bottleneck"] == "compute"
    assert evidence["input_cpu_share"] == pytest.approx(0.3) and evidence["producer_cores"] == pytest.approx(0.6)
    # The held-out image trainers that looked like this ran 1.15-1.22x faster with the input free.
    assert evidence["input_free_low"] <= 1.15 and evidence["input_free_high"] >= 1.22
    assert evidence["input_free_low"] < 1 / (1 - evidence["input_cost_share"]) < evidence["input_free_high"]
    assert "workers use 0.6 of the 2.0 cores the job keeps busy (30%)" in verdict["summary"]
    assert "training's own threads" in verdict["summary"]
    ids = [a["id"] for a in advice]
    assert "num-workers" not in ids
    assert any("input.cpu" in a["addresses"] for a in advice), ids


def test_input_fixes_come_after_the_compute_fixes_and_never_promise_more_than_the_free_input():
    data = busy_workers(producer_cores=0.6)
    data["model"] = {"class": "Net", "where": "train.py:9", "param_dtypes": ["float32"], "autocast": False,
                     "compiled": False}
    verdict, advice = advised(data)
    # compute fixes that gain first; one ranked at no gain (compile's prior on a CPU) after every gain
    worth = [a["estimated_speedup"] or a.get("prior") or 1.0 for a in advice]
    for_compute = [i for i, a in enumerate(advice) if "compute" in a["addresses"] and worth[i] >= 1.05]
    for_input = [i for i, a in enumerate(advice) if "compute" not in a["addresses"]]
    assert for_input and (not for_compute or max(for_compute) < min(for_input))
    gaining = [i for i, w in enumerate(worth) if w >= 1.05]
    assert all(i > max(gaining) for i, w in enumerate(worth) if w < 1.05)
    for item in advice:
        if item["estimated_speedup"] is not None and "compute" not in item["addresses"]:
            assert item["estimate"]["high"] <= verdict["evidence"]["input_free_high"]


def test_workers_that_take_little_leave_the_compute_verdict_as_it_was():
    verdict, advice = advised(busy_workers(producer_cores=0.2))     # 10% of the job's CPU
    assert "input_cpu_share" not in verdict["evidence"] and "Yet making batches" not in verdict["summary"]
    assert not [a for a in advice if "compute" not in a["addresses"] and "input.cpu" in a["addresses"]]
    report = {"verdict": verdict, "steps": {"data_wait_share": 0.01}, "system": {}}
    assert next_steps_for_compute(report).startswith("Fixes: none needed in the input pipeline")


def test_the_next_steps_never_say_the_input_needs_nothing_when_it_costs_cores():
    verdict, _ = advised(busy_workers(producer_cores=0.6))
    text = next_steps_for_compute({"verdict": verdict, "steps": {"data_wait_share": 0.01}, "system": {}})
    assert "none needed" not in text and "30% of the job's CPU" in text


GPU = [{"index": 0, "util_gpu": 0.8, "mem_used_max_bytes": 1e9, "mem_total_bytes": 8e9, "job_memory_bytes": 1e9}]


def test_on_a_gpu_machine_the_cost_is_the_launching_threads_wait_for_a_core():
    verdict, advice = advised(busy_workers(producer_cores=0.6, gpus=GPU, training_wait=0.3))
    evidence = verdict["evidence"]
    assert verdict["bottleneck"] == "compute"
    assert "thread that launches the GPU's kernels" in verdict["summary"]
    for_input = [a for a in advice if "compute" not in a["addresses"]]
    assert for_input and all("launches the GPU's kernels" in a["why"] for a in for_input)
    # At stake: the launching thread's 30% wait for a core, bounded by the GPU's 20% idle time.
    assert evidence["input_cost_share"] == pytest.approx(0.1)
    assert evidence["input_free_high"] == pytest.approx(1.25, abs=0.01)


def test_on_a_gpu_machine_with_an_idle_core_the_input_costs_nothing():
    verdict, _ = advised(busy_workers(producer_cores=0.6, gpus=GPU, training_wait=0.3, idle=0.5, cores_busy=1.0))
    assert "input_cpu_share" not in verdict["evidence"]


# -- decoding more than the model sees ----------------------------------------------------------

def with_images(data, decoded=(500, 375), target=(64, 64), decode_s=0.004, resize_s=0.002, fmt="JPEG"):
    """The image probe's figures on the loader: per sample, decode and resize CPU seconds against the
    producers' CPU time for their samples."""
    loader = data["dataloaders"][0]
    per_sample = loader["producer"]["cpu_s"] / (loader["producer"]["batches"] * loader["batch_size"])
    scale = per_sample / 0.008                      # decode + resize take 75% of a sample's making
    loader["images"] = {"decoded": list(decoded), "target": list(target), "format": fmt, "samples": 128,
                        "decode_s": decode_s * scale, "resize_s": resize_s * scale}
    return data


def decode_fix(data):
    return next((a for a in advised(data)[1] if a["id"] == "decode-reduced-size"), None)


def test_decoding_photos_to_shrink_them_offers_draft_mode_with_its_try_key():
    fix = decode_fix(with_images(busy_workers(producer_cores=0.6)))
    assert fix is not None
    assert fix["change"] == {"jpeg_draft": 64}
    assert "image.draft('RGB', (64, 64))" in fix["snippet"]
    assert "decoded at 500x375 and resized to 64x64" in fix["detail"] and "1/4, to 125x94" in fix["detail"]
    assert "keeping the random augmentation online" not in fix["detail"]    # the loader draws nothing random
    assert "75% of the producers' CPU time" in fix["why"]
    assert 1.0 < fix["estimate"]["low"] < fix["estimated_speedup"] < fix["estimate"]["high"]


def test_random_augmentation_is_kept_online_in_the_ahead_of_training_option():
    data = with_images(busy_workers(producer_cores=0.6))
    data["dataloaders"][0]["augmentation"] = {"random": ["torch.rand at train.py:12"], "deterministic": [],
                                              "checked": True}
    assert "keeping the random augmentation online" in decode_fix(data)["detail"]


@pytest.mark.parametrize("kwargs", [{"decoded": (100, 75)}, {"decode_s": 0.0005, "resize_s": 0.0005},
                                    {"decoded": (125, 94)}])
def test_images_near_the_models_size_or_cheap_to_decode_get_no_such_fix(kwargs):
    assert decode_fix(with_images(busy_workers(producer_cores=0.6), **kwargs)) is None


def test_no_input_cost_no_decode_fix():
    assert decode_fix(with_images(busy_workers(producer_cores=0.2))) is None


def test_a_png_gets_no_draft_key():
    fix = decode_fix(with_images(busy_workers(producer_cores=0.6), fmt="PNG"))
    assert fix is not None and fix["change"] is None and "draft" not in fix["detail"].split(":")[1].split(";")[0]


def beside_other_processes(wait, training_wait, other_cores, producer_cores=0.4):
    """A single-process loader on 2 cores whose machine other processes kept busy (system.others)."""
    data = sections(wait=wait, workers=0, cpu=0.9, cores_busy=0.9, idle=0.0)
    producer = data["dataloaders"][0]["producer"]
    producer["cpu_s"] = producer_cores * data["steps"]["window_s"]
    producer["wall_s"] = producer["cpu_s"] / 0.9
    data["steps"]["training_cpu"] = {"run_s": 2.0, "wait_s": 2.0, "wait_share": training_wait, "threads": 4}
    data["system"]["others"] = {"other_cores": other_cores, "cpu_count": 2, "share": other_cores / 2,
                                "notable": other_cores >= 0.5, "over": "steps"}
    return data


def test_beside_other_processes_the_wait_is_judged_without_the_cores_they_took():
    # An input-bound job (88% waiting alone) beside a CPU hog: its two intra-op threads waited for a
    # core 52% of the time, the wait fell to 29% and compute took the rest. Without the hog's part of
    # compute, the wait is 41% of a step: the input, as on a quiet machine.
    verdict, _ = advised(beside_other_processes(wait=0.29, training_wait=0.52, other_cores=1.14))
    assert verdict["bottleneck"] == "input.cpu"
    alone = verdict["evidence"]["wait_share_job_alone"]
    # compute 0.71 less the hog's part of the training's wait: 0.52 x 1.14 / (1.14 + 0.4)
    own = 0.71 * (1 - 0.52 * 1.14 / 1.54)
    assert alone == pytest.approx(0.29 / (0.29 + own), abs=0.01) and verdict["share"] == pytest.approx(alone, abs=0.01)
    assert verdict["summary"].startswith("Input-bound: 29% of each step waits on")
    assert "other processes held 1.1 of 2 cores" in verdict["summary"]


def test_the_same_figures_on_a_quiet_machine_stay_compute():
    # Without other processes, the training's wait for a core is the job's own: nothing is taken out.
    verdict, _ = advised(beside_other_processes(wait=0.29, training_wait=0.52, other_cores=0.1))
    assert verdict["bottleneck"] == "compute"
    # ... and a small wait stays compute however busy the machine: it is not the largest part.
    verdict, _ = advised(beside_other_processes(wait=0.16, training_wait=0.3, other_cores=1.0))
    assert verdict["bottleneck"] == "compute"


def test_training_threads_held_up_by_the_workers_raise_the_high_end():
    # examples/photo_decode.py on an idle machine: workers 0.42 of 2 busy cores (21%), the training's
    # two intra-op threads waiting for a core 21% of the time: with the input free it ran 1.58x faster.
    data = busy_workers(producer_cores=0.42, cores_busy=2.0, training_wait=0.21)
    data["dataloaders"][0]["torch_threads"] = 2
    verdict, _ = advised(data)
    evidence = verdict["evidence"]
    assert verdict["bottleneck"] == "compute"
    assert evidence["input_free_low"] <= 1.15 and evidence["input_free_high"] >= 1.58
    # one intra-op thread: held up only while it waits itself
    data["dataloaders"][0]["torch_threads"] = 1
    verdict, _ = advised(data)
    assert verdict["evidence"]["input_free_high"] == pytest.approx(1 / (1 - 0.21), abs=0.01)


def test_a_notable_inline_wait_beside_a_compute_verdict_keeps_its_fixes_capped_at_the_wait_made_free():
    """A collator tokenizing in the training process: 25% of each step waits, under the input
    threshold, so the verdict is compute; the wait is still lost time its fixes buy back."""
    from tests.unit.test_verdict_and_advice import sections
    verdict, advice = advised(sections(wait=0.25, cpu=0.95, workers=0))
    assert verdict["bottleneck"] == "compute"
    for_input = [a for a in advice if "input.cpu" in a["addresses"]]
    assert for_input, [a["id"] for a in advice]
    for item in for_input:
        assert item["estimate"]["high"] <= 1 / (1 - 0.25) + 0.01, item
    for_compute = [i for i, a in enumerate(advice) if "compute" in a["addresses"]]
    assert not for_compute or max(for_compute) < min(advice.index(a) for a in for_input)
