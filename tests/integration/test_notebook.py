"""%%gpuprof in a real Jupyter kernel (ipykernel, driven by nbclient): the verdicts inline, the
cell's output, value and variables as without the magic, its exception unchanged after a report,
a second profiled cell starting clean, and the inline HTML opened in headless Chromium."""

import concurrent.futures
import html
import os
import re
import subprocess
import sys

import pytest

from tests.integration.helpers import env_with_source, gpuprof, load_json

pytest.importorskip("torch")
nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

SETUP = '''import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

class Augmented(Dataset):
    """Heavy per-sample CPU work, deterministic per index."""
    def __len__(self):
        return 16 * 16
    def __getitem__(self, i):
        x = torch.rand(3, 32, 32, generator=torch.Generator().manual_seed(i))
        for _ in range(20):
            x = (x + 0.01 * torch.sin(x * 7.0)).clamp(0, 1)
            x = (x + x.roll(1, dims=-1) + x.roll(-1, dims=-1)) / 3
        return x, i % 10

class Ready(Dataset):
    def __init__(self):
        self.x = torch.rand(16 * 16, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    def __len__(self):
        return len(self.x)
    def __getitem__(self, i):
        return self.x[i], i % 10

torch.manual_seed(0)
small = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10))
large = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                      nn.Linear(1024, 10))
starved = DataLoader(Augmented(), batch_size=16)
ready = DataLoader(Ready(), batch_size=16)'''

INPUT = '''total = 0.0
optimizer = torch.optim.SGD(small.parameters(), lr=0.01)
for x, y in starved:
    loss = nn.functional.cross_entropy(small(x), y)
    optimizer.zero_grad(); loss.backward(); optimizer.step()
    total += loss.item()
print(f"input-bound total {total:.4f}")
total'''

COMPUTE = '''heavy = 0.0
optimizer = torch.optim.SGD(large.parameters(), lr=0.01)
for epoch in range(3):
    for x, y in ready:
        loss = nn.functional.cross_entropy(large(x), y)
        optimizer.zero_grad(); loss.backward(); optimizer.step()
        heavy += loss.item()
print(f"compute-bound total {heavy:.4f}")'''

RAISES = '''steps = 0
optimizer = torch.optim.SGD(large.parameters(), lr=0.01)
for x, y in ready:
    loss = nn.functional.cross_entropy(large(x), y)
    optimizer.zero_grad(); loss.backward(); optimizer.step()
    steps += 1
    if steps == 6:
        raise ValueError(f"stopped at step {steps}")'''

CHECK = 'print(round(total, 4), round(heavy, 4), round(small[1].weight.sum().item(), 4), round(large[1].weight.sum().item(), 4))'


def execute(cells, tmp_path, allow_errors=False):
    return execute_side_by_side([cells], tmp_path, allow_errors=allow_errors)[0]


def execute_side_by_side(notebooks_cells, tmp_path, allow_errors=False) -> list:
    """Each list of cells as a notebook of its own, in a kernel of its own, the kernels at once (each
    client in a thread: its own event loop); the notebooks, in order."""
    notebooks = [nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
                 for cells in notebooks_cells]
    env = env_with_source({"XDG_STATE_HOME": str(tmp_path / "state")})
    clients = [nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=allow_errors,
                                       resources={"metadata": {"path": str(tmp_path)}}) for notebook in notebooks]
    saved = dict(os.environ)
    os.environ.update(env)            # the kernels start with the test's environment
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(clients)) as pool:
            for done in [pool.submit(client.execute) for client in clients]:
                done.result()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return notebooks


def own_outputs(cell) -> list:
    """The cell's own outputs: its printed text, its value and its error, without gpuprof's report."""
    out = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            out.append(("stream", output["name"], output["text"]))
        elif output["output_type"] == "execute_result":
            out.append(("value", output["data"].get("text/plain")))
        elif output["output_type"] == "error":
            out.append(("error", output["ename"], output["evalue"]))
    return out


def reports(cell) -> list:
    return [o for o in cell.get("outputs", []) if o["output_type"] == "display_data"
            and "gpuprof" in o["data"].get("text/plain", "")]


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("notebook")
    magic = execute(["%load_ext gpuprof", SETUP, f"%%gpuprof --json {folder / 'input.json'}\n" + INPUT,
                     f"%%gpuprof --json {folder / 'compute.json'} --html {folder / 'compute.html'}\n" + COMPUTE, CHECK],
                    folder)
    plain = execute([SETUP, INPUT, COMPUTE, CHECK], folder)
    return {"folder": folder, "magic": magic.cells[1:], "plain": plain.cells}


def test_each_cell_shows_its_verdict_inline(notebooks):
    input_cell, compute_cell = notebooks["magic"][1], notebooks["magic"][2]
    (shown,) = reports(input_cell)
    assert "Input-bound" in shown["data"]["text/plain"] and "text/html" in shown["data"]
    (shown,) = reports(compute_cell)
    assert "Compute-bound" in shown["data"]["text/plain"]
    folder = notebooks["folder"]
    assert load_json(folder / "input.json")["verdict"]["bottleneck"] == "input.cpu"
    assert load_json(folder / "compute.json")["verdict"]["bottleneck"] == "compute"
    assert (folder / "compute.html").read_text().startswith("<!DOCTYPE html>")


def test_the_cells_output_value_and_variables_are_as_without_the_magic(notebooks):
    for magic, plain in zip(notebooks["magic"], notebooks["plain"]):
        assert own_outputs(magic) == own_outputs(plain)
    final = own_outputs(notebooks["magic"][-1])
    assert final and final[0][0] == "stream"                   # the values left in the kernel, printed


def test_the_verdict_is_the_one_run_gives_the_same_code_as_a_script(notebooks, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SETUP + "\n" + INPUT.rsplit("\n", 1)[0] + "\n")
    got = gpuprof("run", "-q", "--python", sys.executable, "--out", str(tmp_path / "run"), str(script),
                  cwd=str(tmp_path), timeout=300)
    assert got.returncode == 0, got.stderr
    run = load_json(tmp_path / "run" / "report.json")
    inline = load_json(notebooks["folder"] / "input.json")
    assert run["verdict"]["bottleneck"] == inline["verdict"]["bottleneck"] == "input.cpu"


def test_an_exception_still_gives_a_report_and_reaches_the_notebook_unchanged(tmp_path):
    # Side by side: the plain notebook is its set-up and the cell that raises, compared on outputs only.
    magic, plain = execute_side_by_side([["%load_ext gpuprof", SETUP, "%%gpuprof\n" + RAISES, "%%gpuprof\n" + INPUT],
                                         [SETUP, RAISES]], tmp_path, allow_errors=True)
    raised, after = magic.cells[2], magic.cells[3]
    assert own_outputs(raised) == own_outputs(plain.cells[1]) == [("error", "ValueError", "stopped at step 6")]
    (error,) = [o for o in raised.outputs if o["output_type"] == "error"]
    frames = "\n".join(error["traceback"])
    assert "gpuprof/" not in frames and "cell.py" not in frames                # no gpuprof frame in the traceback
    assert 'raise ValueError(f"stopped at step {steps}")' in re.sub(r"\x1b\[[0-9;]*m", "", frames)
    (shown,) = reports(raised)
    assert "the cell raised ValueError: stopped at step 6" in " ".join(shown["data"]["text/plain"].split())
    # The next profiled cell starts clean: its own run, its own steps only.
    (shown,) = reports(after)
    text = " ".join(shown["data"]["text/plain"].split())
    assert "the cell finished" in text and "Input-bound" in text


def test_the_inline_html_opens_in_a_browser_with_its_charts(notebooks, tmp_path):
    from tests.integration.test_html_browser import BROWSER, FLAGS, _need_browser
    _need_browser()
    (shown,) = reports(notebooks["magic"][1])
    inline = shown["data"]["text/html"]
    assert "<script" not in inline
    framed = html.unescape(re.search(r'srcdoc="([^"]*)"', inline).group(1))
    page = tmp_path / "cell.html"
    page.write_text(framed)
    done = subprocess.run([BROWSER, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert [line for line in done.stderr.splitlines() if ":CONSOLE" in line] == []
    assert "Input-bound" in done.stdout
    assert len(re.findall(r'<svg class="plot"', done.stdout)) >= 3
    # The bundle as a front end holds it: the frame is in the page, with the verdict above it.
    outer = tmp_path / "output.html"
    outer.write_text(f"<!DOCTYPE html><html><body>{inline}</body></html>")
    done = subprocess.run([BROWSER, *FLAGS, f"--user-data-dir={tmp_path / 'profile2'}", "--dump-dom", outer.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "<iframe" in done.stdout and "Input-bound" in done.stdout


WORKERS_MODULE = '''import torch
from torch.utils.data import Dataset


class Augmented(Dataset):
    """In a module of its own: spawned workers import it (a class defined in a cell they cannot)."""
    def __len__(self):
        return 16 * 12
    def __getitem__(self, i):
        x = torch.rand(3, 32, 32, generator=torch.Generator().manual_seed(i))
        for _ in range(40):
            x = (x + 0.01 * torch.sin(x * 7.0)).clamp(0, 1)
        return x, i % 10
'''

WORKERS = '''%%gpuprof --json {json}
import torch
from torch import nn
from torch.utils.data import DataLoader
from nbdata import Augmented
model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(Augmented(), batch_size=16, num_workers=2, multiprocessing_context="{context}")
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(); loss.backward(); optimizer.step()
print("done")'''


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_dataloader_workers_of_a_cell_are_followed(tmp_path, context):
    (tmp_path / "nbdata.py").write_text(WORKERS_MODULE)
    notebook = execute(["%load_ext gpuprof", WORKERS.format(json=tmp_path / "cell.json", context=context)], tmp_path)
    assert own_outputs(notebook.cells[1]) == [("stream", "stdout", "done\n")]
    report = load_json(tmp_path / "cell.json")
    (loader,) = report["dataloaders"]
    assert loader["num_workers"] == 2 and loader["context"] == context
    assert loader["workers_seen"] == 2 and loader["producer"]["batches"] >= 10     # the workers' own figures
    assert loader["where"].endswith(":8") and report["steps"]["measured"] >= 8      # the cell's DataLoader line


def test_a_line_magic_profiles_one_statement_and_try_runs_on_a_script(tmp_path):
    notebook = execute(["%load_ext gpuprof", SETUP,
                        "def train():\n    opt = torch.optim.SGD(small.parameters(), lr=0.01)\n    for x, y in starved:\n"
                        "        loss = nn.functional.cross_entropy(small(x), y)\n        opt.zero_grad(); loss.backward(); opt.step()\n"
                        "    return round(loss.item(), 4)",
                        "%gpuprof train()", "%gpuprof try --help"], tmp_path)
    line, tried = notebook.cells[3], notebook.cells[4]
    (shown,) = reports(line)
    assert "Input-bound" in shown["data"]["text/plain"]
    assert own_outputs(line)[0][0] == "value"
    assert "gpuprof try" in "".join(o.get("text", "") for o in tried.outputs)


def test_interrupting_the_kernel_ends_the_cell_and_keeps_the_report(tmp_path):
    from jupyter_client.manager import start_new_kernel
    saved = dict(os.environ)
    os.environ.update(env_with_source({"XDG_STATE_HOME": str(tmp_path / "state")}))
    try:
        manager, client = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    try:
        client.execute_interactive("%load_ext gpuprof\n", timeout=120)
        client.execute_interactive(SETUP, timeout=120)
        forever = "%%gpuprof\noptimizer = torch.optim.SGD(large.parameters(), lr=0.01)\nwhile True:\n" \
                  "    for x, y in ready:\n        loss = nn.functional.cross_entropy(large(x), y)\n" \
                  "        optimizer.zero_grad(); loss.backward(); optimizer.step()\n"
        outputs = []
        import threading
        timer = threading.Timer(6.0, manager.interrupt_kernel)
        timer.start()
        reply = client.execute_interactive(forever, timeout=180, output_hook=outputs.append)
        timer.cancel()
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
    shown = [" ".join(m["content"]["data"]["text/plain"].split()) for m in outputs if m["msg_type"] == "display_data"]
    assert len(shown) == 1 and "the cell was interrupted" in shown[0] and "Compute-bound" in shown[0]
