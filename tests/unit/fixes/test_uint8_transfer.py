from gpuprof.advise.fixes import uint8_transfer
from tests.unit.fixes.cases import LOADER, evidence, gpu, situation

BATCH = {"dtype": "float32", "shape": [256, 3, 64, 64], "uint8_candidate": True, "uint8_form": "k/255"}


def test_float_batches_of_byte_values_ship_as_uint8_and_normalise_on_the_device():
    built = uint8_transfer.build(evidence(loader=dict(LOADER, batch=BATCH), copy_share=0.4, **gpu()),
                                 situation("transfer.h2d", 0.4))
    assert ".float().div_(255)" in built["snippet"] and "4x fewer bytes" in built["detail"]


def test_values_that_do_not_fit_a_byte_stay_as_they_are():
    batch = dict(BATCH, uint8_candidate=False)
    assert uint8_transfer.build(evidence(loader=dict(LOADER, batch=batch), copy_share=0.4, **gpu()),
                                situation("transfer.h2d", 0.4)) is None


def test_a_float_tensor_of_byte_values_copied_outside_a_dataloader_is_offered_uint8_at_its_line():
    values = {"dtype": "float32", "shape": [512, 3, 224, 224], "where": "train.py:21", "uint8_candidate": True,
              "uint8_form": "0..255", "looked_at": 4}
    built = uint8_transfer.build(evidence(copies={"values": values}, copy_share=0.84, **gpu()),
                                 situation("transfer.h2d", 0.84))
    assert built["where"] == "train.py:21" and "data.to(torch.uint8)" in built["snippet"]
    assert "float32 [512, 3, 224, 224] copied to the GPU holds uint8 values" in built["detail"]
    assert built["estimated_speedup"] > 1.5
    mixed = dict(values, uint8_candidate=False)
    assert uint8_transfer.build(evidence(copies={"values": mixed}, copy_share=0.84, **gpu()),
                                situation("transfer.h2d", 0.84)) is None
