"""The out-of-memory fixes (one module each): what each frees, from the memory section."""

from gpuprof.advise.fixes import (activation_checkpointing, eight_bit_optimizer, grads_set_to_none,
                                  mixed_precision_memory, smaller_batch_accumulate)
from gpuprof.advise.memory_facts import MemoryFacts

CUDA = MemoryFacts.of({"device": "cuda", "rest_bytes": 8 * 2**30,
                       "anatomy": {"state_bytes": 2 * 2**30, "grad_bytes": 2**30, "state_bytes_per_param": 8}}, 64)
CPU = MemoryFacts.of({"device": "cpu", "rest_bytes": 8 * 2**30, "anatomy": {}}, None)


def test_smaller_batch_accumulate_frees_half_the_activations_on_a_gpu():
    assert smaller_batch_accumulate.build(CUDA)["frees"] == 4 * 2**30
    assert "64 -> 32" in smaller_batch_accumulate.build(CUDA)["detail"]
    assert smaller_batch_accumulate.build(CPU)["frees"] is None and "halved" in smaller_batch_accumulate.build(CPU)["detail"]


def test_mixed_precision_memory_frees_half_the_activations():
    assert mixed_precision_memory.build(CUDA)["frees"] == 4 * 2**30


def test_activation_checkpointing_frees_most_activations_for_more_compute():
    assert activation_checkpointing.build(CUDA)["frees"] == 0.6 * 8 * 2**30


def test_eight_bit_optimizer_needs_optimizer_state():
    assert eight_bit_optimizer.build(CUDA)["frees"] == 0.75 * 2 * 2**30
    assert eight_bit_optimizer.build(CPU) is None


def test_grads_set_to_none_frees_the_gradients():
    assert grads_set_to_none.build(CUDA)["frees"] == 2**30
    assert grads_set_to_none.build(CPU) is None
