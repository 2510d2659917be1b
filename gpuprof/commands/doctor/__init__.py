"""`gpuprof doctor`: what gpuprof can see on this machine (NVML, GPUs, the GPUs a job may use,
containers, torch, py-spy, limits), and a runner that proves gpuprof's GPU verdicts on scenarios
with known answers, on the simulated device or on the GPU at hand.

Facts are gathered by small readers (`nvml_facts`, `torch_facts`, `host_facts`), turned into
sections of ✓/–/✗ lines by pure functions (`checks`), and drawn by `lines`. The scenario side:
`scenarios` loads them, `runner` runs one under `gpuprof run`, `expectations` compares its report
(read through `report_fields` alone) with what the scenario expects, and `table` draws the result."""
