"""The HTML report as a person sees it: example runs' pages opened in headless Chromium, with no
console message, the verdict shown, every chart's script hooked up, and a screenshot in which the
plots drew.

CI installs Debian's chromium (.ci/run) and sets GPUPROF_REQUIRE_BROWSER=1, so there a missing
browser fails the test; elsewhere it is skipped. GPUPROF_SCREENSHOTS=DIR keeps the screenshots."""

import os
import re
import shutil
import subprocess

import pytest

from tests.conftest import ROOT
from tests.integration.helpers import gpuprof, load_json

BROWSER = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")
                if shutil.which(name)), None)
REQUIRED = os.environ.get("GPUPROF_REQUIRE_BROWSER") == "1"
# Headless, and without the background connections a closed network refuses.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--hide-scrollbars", "--enable-logging=stderr", "--v=0"]
WIDTH, HEIGHT = 1000, 3400


def _need_browser():
    if BROWSER is None:
        if REQUIRED:
            pytest.fail("GPUPROF_REQUIRE_BROWSER=1 but no chromium is installed")
        pytest.skip("no chromium here (CI installs it)")


def _browser(tmp_path, *args):
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    return subprocess.run([BROWSER, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module", params=["cpu_starved.py", "disk_random_reads.py"])
def example_page(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("html-" + request.param.split(".")[0])
    got = gpuprof("run", "-q", "--out", str(folder / "run"), "--html", str(folder / "report.html"),
                  os.path.join(ROOT, "examples", request.param), cwd=str(folder), timeout=300)
    assert got.returncode == 0, got.stderr
    return {"folder": folder, "page": folder / "report.html", "report": load_json(folder / "run" / "report.json"),
            "name": request.param.split(".")[0]}


def test_page_loads_without_a_console_message_and_shows_the_verdict(example_page, tmp_path):
    _need_browser()
    done = _browser(tmp_path, "--dump-dom", example_page["page"].as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []
    dom = done.stdout
    verdict = example_page["report"]["verdict"]
    assert verdict["bottleneck"] == "input.cpu" or verdict["bottleneck"].startswith("input.")
    assert verdict["summary"].split(":")[0] in dom
    charts = len(re.findall(r'<svg class="plot"[^>]*data-points=', dom))
    assert charts >= 4
    # The script ran to its end for every chart: each got its pointer line.
    assert dom.count('class="cursor"') == charts


def test_screenshot_shows_the_plots_drawn(example_page, tmp_path):
    _need_browser()
    from PIL import Image
    shot = tmp_path / "page.png"
    done = _browser(tmp_path, f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={shot}", example_page["page"].as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    keep = os.environ.get("GPUPROF_SCREENSHOTS")
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copy(shot, os.path.join(keep, f"{example_page['name']}.png"))
    image = Image.open(shot).convert("RGB")
    assert image.size == (WIDTH, HEIGHT)
    colours = image.getcolors(maxcolors=WIDTH * HEIGHT)
    count = {rgb: n for n, rgb in colours}
    white = count.get((255, 255, 255), 0)
    assert white < WIDTH * HEIGHT * 0.97              # not a blank page
    # The first series colour (lines and the CPU area's user share) covers a visible area.
    blue = sum(n for rgb, n in count.items() if _near(rgb, (0x00, 0x72, 0xB2), 40) or _near(rgb, (0x66, 0xAA, 0xD1), 30))
    orange = sum(n for rgb, n in count.items() if _near(rgb, (0xE6, 0x9F, 0x00), 40))
    assert blue > 2000 and orange > 300


def _near(a, b, tolerance) -> bool:
    return all(abs(x - y) <= tolerance for x, y in zip(a, b))
