"""Each fix in the words of the framework that runs the training (the one seen on the stack of the
optimizer's step, else the one that built the DataLoader), the plain-PyTorch snippet second, and
the script's own option above both where it has one."""

import pytest

from gpuprof.advise.fixes import compile, ddp_no_sync, larger_batch, mixed_precision, num_workers, tf32
from gpuprof.advise.framework_terms import framework_of
from tests.unit.fixes.cases import LOADER, evidence, gpu, model, on_cuda, situation

BF16_CPU = ("avx512_bf16",)


def compute_run(framework, **fields):
    return evidence(model=model(framework=framework), cpu_flags=BF16_CPU, **fields)


@pytest.mark.parametrize("framework, setting", [
    ("accelerate", 'accelerator = Accelerator(mixed_precision="bf16")   # or: accelerate launch --mixed_precision bf16'),
    ("lightning", 'Trainer(..., precision="bf16-mixed")'),
    ("transformers", "TrainingArguments(..., bf16=True)"),
])
def test_mixed_precision_speaks_the_frameworks_setting_first_and_autocast_second(framework, setting):
    snippet = mixed_precision.build(compute_run(framework), situation("compute", 0.9))["snippet"]
    lines = snippet.splitlines()
    assert lines[0].startswith(setting), snippet
    assert lines[1] == "# or in plain PyTorch:" and "torch.autocast('cpu', dtype=torch.bfloat16)" in lines[2]


def test_float16_on_an_older_gpu_is_spelled_as_each_framework_spells_it():
    ev = evidence(**gpu(gpu_util=0.9), model=on_cuda((7, 5), framework="lightning"))
    assert mixed_precision.build(ev, situation("compute", 0.9))["snippet"].startswith(
        'Trainer(..., precision="16-mixed")')
    ev = evidence(**gpu(gpu_util=0.9), model=on_cuda((7, 5), framework="transformers"))
    assert mixed_precision.build(ev, situation("compute", 0.9))["snippet"].startswith("TrainingArguments(..., fp16=True)")


def test_compile_and_tf32_in_the_frameworks_terms():
    assert compile.build(compute_run("transformers"), situation("compute", 0.9))["snippet"].startswith(
        "TrainingArguments(..., torch_compile=True)")
    assert compile.build(compute_run("accelerate"), situation("compute", 0.9))["snippet"].startswith(
        'accelerator = Accelerator(dynamo_backend="inductor")')
    ev = evidence(**gpu(gpu_util=0.9), model=on_cuda((8, 0), framework="transformers"))
    assert tf32.build(ev, situation("compute", 0.9))["snippet"].startswith("TrainingArguments(..., tf32=True)")


def test_a_loop_of_the_users_own_or_an_unknown_library_keeps_the_plain_snippet():
    for framework in (None, "timm"):
        snippet = compile.build(compute_run(framework), situation("compute", 0.9))["snippet"]
        assert snippet == "model = torch.compile(model)   # once, before the training loop"


def test_the_model_side_framework_falls_back_to_the_loaders():
    ev = compute_run(None, loader=dict(LOADER, framework="lightning"))
    assert framework_of(ev) == "lightning"
    assert framework_of(compute_run("accelerate", loader=dict(LOADER, framework="lightning"))) == "accelerate"


@pytest.mark.parametrize("framework, setting", [
    ("accelerate", "accelerator = Accelerator(gradient_accumulation_steps=4)"),
    ("lightning", "Trainer(..., accumulate_grad_batches=4)"),
    ("transformers", "TrainingArguments(..., gradient_accumulation_steps=4)"),
])
def test_accumulation_for_a_waiting_rank_in_the_frameworks_terms(framework, setting):
    snippet = ddp_no_sync.build(evidence(model=model(framework=framework)), situation("comm", 0.4))["snippet"]
    assert snippet.startswith(setting) and "model.no_sync()" in snippet
    if framework == "accelerate":
        assert "with accelerator.accumulate(model):" in snippet


def test_accumulation_through_the_scripts_own_option_first():
    options = [{"flags": ["--grad-accum"], "dest": "grad_accum", "type": "int", "default": 1, "action": None,
                "choices": None, "help": None}]
    ev = evidence(program={"command": ["python", "ddp.py"], "script": "ddp.py", "options": options})
    snippet = ddp_no_sync.build(ev, situation("comm", 0.4))["snippet"]
    assert snippet.splitlines()[0] == "python ddp.py --grad-accum 4"


def test_a_larger_batch_in_the_trainers_arguments():
    ev = evidence(**gpu(gpu_util=0.9), model=on_cuda(framework="transformers"))
    assert larger_batch.build(ev, situation("compute", 0.9))["snippet"].startswith(
        "TrainingArguments(..., per_device_train_batch_size=64)")


def test_ray_train_loaders_are_prepared_by_ray_and_its_workers_are_not_the_loaders():
    ev = evidence(wait_share=0.6, loader=dict(LOADER, framework="ray"))
    snippet = num_workers.build(ev, situation("input.cpu", 0.6))["snippet"]
    assert "ray.train.torch.prepare_data_loader(loader)" in snippet and "ScalingConfig(num_workers=...)" in snippet


def test_the_memory_fix_halves_the_batch_in_the_frameworks_terms_or_through_both_of_the_scripts_options():
    from gpuprof.advise.fixes import smaller_batch_accumulate
    from gpuprof.advise.memory_facts import MemoryFacts
    memory = {"device": "cuda", "rest_bytes": 2**30, "anatomy": {}}
    trainer = MemoryFacts.of(memory, 32, evidence(model=model(framework="transformers")))
    assert smaller_batch_accumulate.build(trainer)["snippet"].startswith(
        "TrainingArguments(..., per_device_train_batch_size=16, gradient_accumulation_steps=2)")
    options = [{"flags": ["-b", "--batch-size"], "dest": "batch_size", "type": "int", "default": 32, "action": None,
                "choices": None, "help": None},
               {"flags": ["--accum-steps"], "dest": "accum_steps", "type": "int", "default": 1, "action": None,
                "choices": None, "help": None}]
    flagged = evidence(program={"command": ["python", "train.py", "-b", "32"], "script": "train.py", "options": options})
    lines = smaller_batch_accumulate.build(MemoryFacts.of(memory, 32, flagged))["snippet"].splitlines()
    assert lines[0] == "python train.py -b 16 --accum-steps 2" and "-b/--batch-size and --accum-steps" in lines[1]
    only_batch = evidence(program={"command": ["python", "train.py"], "script": "train.py", "options": options[:1]})
    assert smaller_batch_accumulate.build(MemoryFacts.of(memory, 32, only_batch))["snippet"].startswith("for i, (x, y)")


def test_one_process_per_gpu_in_ray_trains_scaling_config():
    from gpuprof.advise.fixes import ddp
    ev = evidence(**gpu(gpu_util=0.9, gpu_count=4), model=on_cuda(framework="ray"))
    snippet = ddp.build(ev, situation("compute", 0.9))["snippet"]
    assert snippet.startswith("TorchTrainer(train_func, scaling_config=ScalingConfig(num_workers=4, use_gpu=True))")
    assert "DistributedDataParallel" in snippet
