import pytest

torch = pytest.importorskip("torch")

from gpuprof.capture.probes.batch_facts import describe_batch  # noqa: E402


def facts(data):
    return {t["path"]: t for t in describe_batch(data, torch)}


def test_integer_valued_floats_could_be_uint8():
    images = torch.randint(0, 256, (4, 3, 8, 8)).float()
    out = facts((images, torch.arange(4)))
    assert out["batch[0]"]["uint8_form"] == "0..255" and out["batch[0]"]["bytes"] == 4 * 3 * 64 * 4
    assert "uint8_candidate" not in out["batch[1]"]          # integer tensors are not judged


def test_scaled_and_normalised_images_are_recognised():
    raw = torch.randint(0, 256, (4, 3, 32, 32)).float()
    assert facts({"x": raw / 255})["batch['x']"]["uint8_form"] == "k/255"
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    assert facts([(raw / 255 - mean) / std])["batch[0]"]["uint8_form"] == "affine"


def test_real_valued_data_is_not_a_candidate_and_is_left_untouched():
    x = torch.randn(16, 3, 16, 16)
    copy = x.clone()
    out = facts(x)
    assert out["batch"]["uint8_candidate"] is False
    assert torch.equal(x, copy)
