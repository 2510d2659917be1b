"""The image probe notes the decoded and target sizes and the time decode and resize take, changes
no pixel, and unwraps itself; `try`'s jpeg_draft variant decodes JPEGs reduced."""

import numpy as np
import pytest

from gpuprof.judge.sections.image_sizes import decode_share, reduction, with_image_sizes
from gpuprof.capture.probes import runtime, image_sizes, variants

Image = pytest.importorskip("PIL.Image")
from PIL import ImageFile  # noqa: E402


@pytest.fixture
def photo(tmp_path):
    rng = np.random.default_rng(0)
    pixels = np.asarray(Image.fromarray(rng.integers(0, 256, (24, 32, 3), dtype=np.uint8)).resize((500, 375)))
    path = tmp_path / "photo.jpg"
    Image.fromarray(pixels).save(path, quality=90)
    return str(path)


@pytest.fixture
def pil_restored(monkeypatch):
    """The probe and the variant wrap PIL's classes: put them back after each test."""
    monkeypatch.setattr(ImageFile.ImageFile, "load", ImageFile.ImageFile.load)
    monkeypatch.setattr(Image.Image, "resize", Image.Image.resize)
    monkeypatch.setattr(image_sizes, "_state", {"pid": None, "installed": False, "originals": {}})
    monkeypatch.setattr(image_sizes, "_counts", image_sizes._fresh())
    events = []
    monkeypatch.setattr(runtime, "emit", events.append)
    monkeypatch.setattr(runtime, "at_close", lambda func: None)
    return events


def shrink(path, draft=False):
    image = Image.open(path)
    if draft:
        image.draft("RGB", (64, 64))
    return np.asarray(image.convert("RGB").resize((64, 64)))


def test_the_probe_notes_sizes_and_times_once_and_changes_no_pixel(photo, pil_restored):
    plain = shrink(photo)
    image_sizes.install(Image)
    assert Image.Image.resize is not image_sizes._state["originals"][(Image.Image, "resize")]
    Image.new("RGB", (8, 6)).resize((80, 60))           # enlarging: not counted
    probed = [shrink(photo) for _ in range(image_sizes.SAMPLES + 5)]
    assert all(np.array_equal(plain, p) for p in probed)
    [event] = pil_restored                              # one event, after SAMPLES shrinks
    assert event["decoded"] == [500, 375] and event["target"] == [64, 64] and event["format"] == "JPEG"
    assert event["resizes"] == image_sizes.SAMPLES and event["decode_s"] > 0 and event["resize_s"] > 0


def test_a_forked_worker_times_its_own_resizes(photo, pil_restored, monkeypatch):
    image_sizes.install(Image)
    for _ in range(image_sizes.SAMPLES):
        shrink(photo)
    monkeypatch.setattr(image_sizes.os, "getpid", lambda: -1)       # as in a child forked after that
    for _ in range(image_sizes.SAMPLES):
        shrink(photo)
    assert len(pil_restored) == 2


def test_a_program_already_in_draft_mode_shows_the_reduced_size(photo, pil_restored):
    image_sizes.install(Image)
    for _ in range(image_sizes.SAMPLES):
        shrink(photo, draft=True)
    assert pil_restored[0]["decoded"] == [125, 94]


def test_the_draft_variant_decodes_jpegs_reduced_as_the_snippet_would(photo, pil_restored):
    by_hand = shrink(photo, draft=True)
    variants.install_pil({"jpeg_draft": 64})
    assert np.array_equal(shrink(photo), by_hand)
    assert Image.open(photo).size == (500, 375)               # nothing changes before decoding
    assert pil_restored[0]["applied"] == {"jpeg_draft": 64}


def test_the_analysis_puts_the_figures_per_sample_on_the_dominant_loader():
    loaders = [{"batch_size": 16, "producer": {"batches": 10, "wall_s": 3.0, "cpu_s": 1.6}}, {"batch_size": 4}]
    events = [{"decoded": [500, 375], "target": [64, 64], "format": "JPEG", "resizes": 64, "decode_s": 0.32,
               "resize_s": 0.064},
              {"decoded": [500, 375], "target": [64, 64], "format": "JPEG", "resizes": 64, "decode_s": 0.32,
               "resize_s": 0.064}]
    out = with_image_sizes(loaders, events)
    images = out[0]["images"]
    assert images["samples"] == 128 and images["decode_s"] == pytest.approx(0.005)
    assert "images" not in out[1]
    assert reduction(images) == pytest.approx(375 / 64)
    assert decode_share(out[0]) == pytest.approx(0.006 / 0.01)
    assert with_image_sizes(loaders, []) is loaders


def test_with_the_try_variant_set_pil_decodes_reduced_and_the_probe_times_that(photo, pil_restored, monkeypatch):
    from gpuprof.capture.probes import install
    monkeypatch.setattr(install, "variants_of", lambda: {"jpeg_draft": 64})
    install._install_pil(Image)
    for _ in range(image_sizes.SAMPLES):
        shrink(photo)
    applied, timed = pil_restored
    assert applied["applied"] == {"jpeg_draft": 64} and timed["decoded"] == [125, 94]
