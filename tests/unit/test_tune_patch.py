"""`gpuprof tune`'s patch: the DataLoader call's keywords at its line and the threads after `import
torch`, with the file's layout and comments kept (libcst), as a diff `git apply` takes."""

import os
import shutil
import subprocess

import pytest

from gpuprof.capture.launch.command import ChildCommand
from gpuprof.commands.tune import patch as patching
from gpuprof.commands.tune import program
from gpuprof.commands.tune.diff import unified
from gpuprof.commands.tune.loader_edit import REMOVE, EditError, edit_loader_call
from gpuprof.commands.tune.script_edit import edit_script

MULTI_LINE = '''import torch
from torch.utils.data import DataLoader

loader = DataLoader(
    data,
    batch_size=8,  # small batches
)
'''


def test_a_keyword_the_call_has_gets_the_new_value_in_place():
    source = "loader = DataLoader(data, batch_size=8, num_workers=0)  # the loader\n"
    edit = edit_loader_call(source, 1, {"num_workers": 2})
    assert edit.source == "loader = DataLoader(data, batch_size=8, num_workers=2)  # the loader\n"
    assert edit.written == {"num_workers": 2} and edit.by_hand == []


def test_a_keyword_the_call_lacks_is_added_on_its_line():
    edit = edit_loader_call("x = DataLoader(data, batch_size=8)\n", 1, {"num_workers": 2, "pin_memory": True})
    assert edit.source == "x = DataLoader(data, batch_size=8, num_workers=2, pin_memory=True)\n"


def test_a_call_over_several_lines_gets_one_keyword_a_line_and_keeps_its_comment_and_trailing_comma():
    edit = edit_loader_call(MULTI_LINE, 5, {"num_workers": 2, "persistent_workers": True})
    assert edit.source.endswith('''loader = DataLoader(
    data,
    batch_size=8,  # small batches
    num_workers=2,
    persistent_workers=True,
)
''')


def test_a_call_without_trailing_comma_keeps_the_comment_on_its_own_argument():
    source = "loader = DataLoader(\n    data,\n    batch_size=8  # small\n)\n"
    edit = edit_loader_call(source, 1, {"num_workers": 2})
    assert edit.source == "loader = DataLoader(\n    data,\n    batch_size=8,  # small\n    num_workers=2\n)\n"


def test_the_line_may_be_any_line_the_call_spans_and_the_innermost_loader_call_is_edited():
    source = "loaders = [DataLoader(a, batch_size=2),\n           DataLoader(b,\n                      batch_size=4)]\n"
    edit = edit_loader_call(source, 3, {"num_workers": 1})
    assert "DataLoader(a, batch_size=2)" in edit.source
    assert "DataLoader(b,\n                      batch_size=4,\n                      num_workers=1)]" in edit.source


def test_positional_values_are_replaced_where_they_stand():
    edit = edit_loader_call("x = DataLoader(data, 8, True, None, None, 0)\n", 1, {"num_workers": 3})
    assert edit.source == "x = DataLoader(data, 8, True, None, None, 3)\n"


def test_values_the_program_computes_or_spreads_are_left_for_the_user():
    edit = edit_loader_call("x = DataLoader(data, num_workers=args.workers, **extra)\n", 1,
                            {"num_workers": 2, "pin_memory": True})
    assert edit.source == "x = DataLoader(data, num_workers=args.workers, **extra)\n"
    assert any("args.workers" in line for line in edit.by_hand)
    assert any("**kwargs" in line and "pin_memory" in line for line in edit.by_hand)


def test_no_workers_takes_the_settings_that_need_them_out():
    source = "x = DataLoader(data, num_workers=4, prefetch_factor=4, persistent_workers=True)\n"
    edit = edit_loader_call(source, 1, {"num_workers": 0, "prefetch_factor": REMOVE, "persistent_workers": REMOVE})
    assert edit.source == "x = DataLoader(data, num_workers=0)\n"


def test_a_line_without_a_loader_call_is_an_edit_error():
    with pytest.raises(EditError, match="no DataLoader"):
        edit_loader_call("x = 1\n", 1, {"num_workers": 2})


def test_threads_go_right_after_the_script_s_import_torch():
    source = '"""Train."""\nimport os\nimport torch  # the library\nfrom torch import nn\n\nx = 1\n'
    assert edit_script(source, {"torch_threads": 1}) == (
        '"""Train."""\nimport os\nimport torch  # the library\ntorch.set_num_threads(1)  # set by gpuprof tune\n'
        'from torch import nn\n\nx = 1\n')


def test_without_import_torch_the_import_comes_too_after_the_leading_imports():
    source = '"""Train."""\nfrom __future__ import annotations\nfrom torch import nn\n\nx = 1\n'
    assert edit_script(source, {"torch_threads": 2}) == (
        '"""Train."""\nfrom __future__ import annotations\nfrom torch import nn\nimport torch\n'
        'torch.set_num_threads(2)  # set by gpuprof tune\n\nx = 1\n')


def test_a_thread_count_the_script_sets_already_is_changed_in_place_under_its_alias():
    source = "import torch as th\nth.set_num_threads(8)  # eight\n"
    assert edit_script(source, {"torch_threads": 3}) == "import torch as th\nth.set_num_threads(3)  # eight\n"


def test_a_file_without_a_last_newline_still_makes_a_diff_git_takes():
    text = unified("t.py", "a = 1\nb = 2", "a = 1\nb = 3")
    assert text.endswith("+b = 3\n\\ No newline at end of file\n")


def facts_for(where, framework=None):
    return program.ProgramFacts(cores=4, gpu=False, loader={"where": where, "num_workers": 0, "framework": framework},
                                threads=4, input_bound=True, batch_size=8)


@pytest.fixture
def repo(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    folder = tmp_path / "repo"
    (folder / "pkg").mkdir(parents=True)
    (folder / "train.py").write_text("import torch\nfrom pkg.data import make\n\nloader = make()\n")
    (folder / "pkg" / "data.py").write_text(MULTI_LINE.replace("import torch\n", "def make():\n    pass\n\n\n"))
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)
    return folder


def test_the_patch_edits_the_loader_s_module_and_the_script_and_git_applies_it(repo):
    line = (repo / "pkg" / "data.py").read_text().splitlines().index("loader = DataLoader(") + 1
    command = ChildCommand(["python", "train.py"], "script", "train.py")
    built = patching.build({"num_workers": 3, "torch_threads": 1}, facts_for(f"pkg/data.py:{line}"), {}, command,
                           str(repo))
    assert os.path.realpath(built.root) == os.path.realpath(repo)
    assert [f.shown for f in built.files] == ["pkg/data.py", "train.py"]
    assert "+    num_workers=3,\n" in built.text and "+torch.set_num_threads(1)" in built.text
    assert built.by_hand == [] and built.command_line is None
    (repo / "tune.patch").write_text(built.text)
    checked = subprocess.run(["git", "apply", "--check", "tune.patch"], cwd=repo, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    assert (repo / "train.py").read_text() == "import torch\nfrom pkg.data import make\n\nloader = make()\n"


def test_what_code_cannot_carry_is_said(repo):
    command = ChildCommand(["python", "-m", "absent.module"], "module", "absent.module")
    built = patching.build({"torch_threads": 1, "num_workers": 2}, facts_for("site-packages/x.py:3", "transformers"),
                           {}, command, str(repo))
    assert built.files == []
    assert built.command_line == "OMP_NUM_THREADS=1 python -m absent.module"
    assert any("dataloader_num_workers" in line for line in built.by_hand)


def test_applying_refuses_a_file_changed_since_the_patch_was_made(repo):
    command = ChildCommand(["python", "train.py"], "script", "train.py")
    built = patching.build({"torch_threads": 1}, facts_for(None), {}, command, str(repo))
    (repo / "train.py").write_text("import torch\n# edited meanwhile\n")
    with pytest.raises(OSError, match="changed since"):
        patching.apply(built)
    assert (repo / "train.py").read_text() == "import torch\n# edited meanwhile\n"
