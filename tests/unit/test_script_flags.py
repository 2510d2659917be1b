"""The script's own options, read from its source with `ast` (never imported or run): argparse in
its several styles, a parser in a module of the script's own folder, click and tyro."""

import textwrap

import pytest

from gpuprof.judge.sections.script_flags import program_options, read_options


def write(folder, name, text):
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def by_flag(options):
    return {o["flags"][-1]: o for o in options}


def test_argparse_options_with_their_flags_dest_type_default_action_choices_and_help(tmp_path):
    script = write(tmp_path, "train.py", """
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("data", help="a positional argument has no flag to set")
        parser.add_argument("-j", "--workers", default=4, type=int, metavar="N", help="number of data loading workers")
        group = parser.add_argument_group("precision")
        group.add_argument("--amp", action="store_true", default=False, help="use NVIDIA Apex AMP or native AMP")
        group.add_argument("--amp-dtype", default="float16", type=str, choices=["float16", "bfloat16"])
        parser.add_argument("--no-compile", dest="compile", action="store_false")
        parser.add_argument("--bs", dest="batch_size", default=64)
        parser.add_argument("--tf32", action=argparse.BooleanOptionalAction, default=SOME_CONSTANT)
        args = parser.parse_args()
    """)
    options = by_flag(read_options(script))
    assert set(options) == {"--workers", "--amp", "--amp-dtype", "--no-compile", "--bs", "--tf32"}
    workers = options["--workers"]
    assert workers["flags"] == ["-j", "--workers"] and workers["dest"] == "workers" and workers["type"] == "int"
    assert workers["default"] == 4 and workers["help"] == "number of data loading workers"
    assert options["--amp"]["action"] == "store_true" and options["--amp-dtype"]["choices"] == ["float16", "bfloat16"]
    assert options["--no-compile"]["dest"] == "compile" and options["--no-compile"]["action"] == "store_false"
    assert options["--bs"]["type"] == "int"          # from the default: the script converts it itself
    assert options["--tf32"]["action"] == "BooleanOptionalAction" and options["--tf32"]["default"] is None


def test_a_parser_in_a_module_of_the_scripts_own_folder_is_read_too(tmp_path):
    write(tmp_path, "options.py", """
        def get_parser(parser):
            parser.add_argument('--num-envs', type=int, default=8, help='the number of parallel game environments')
            return parser
    """)
    (tmp_path / "pkg").mkdir()
    write(tmp_path / "pkg", "__init__.py", "def more(p):\n    p.add_argument('--grad-accum', type=int, default=1)\n")
    script = write(tmp_path, "ppo.py", """
        import argparse, os
        from options import get_parser
        import pkg
        args = get_parser(argparse.ArgumentParser()).parse_args()
    """)
    assert set(by_flag(read_options(script))) == {"--num-envs", "--grad-accum"}


def test_click_options_and_tyro_dataclass_fields(tmp_path):
    clicked = write(tmp_path, "gan.py", """
        import click
        @click.command()
        @click.option("--workers", "-w", type=int, default=2, help="dataloader workers")
        @click.option("--amp/--no-amp", default=False)
        @click.option("--compile", is_flag=True)
        def main(workers, amp, compile):
            pass
    """)
    options = by_flag(read_options(clicked))
    assert options["-w"]["flags"] == ["--workers", "-w"] and options["-w"]["type"] == "int"
    assert options["--no-amp"]["action"] == "BooleanOptionalAction" and options["--compile"]["action"] == "store_true"
    tyroed = write(tmp_path, "rl.py", """
        from dataclasses import dataclass
        import tyro

        @dataclass
        class Args:
            num_envs: int = 4
            \"\"\"the number of parallel game environments\"\"\"
            torch_compile: bool = False

        args = tyro.cli(Args)
    """)
    options = by_flag(read_options(tyroed))
    assert options["--num-envs"]["default"] == 4 and "parallel game" in options["--num-envs"]["help"]
    assert options["--no-torch-compile"]["flags"] == ["--torch-compile", "--no-torch-compile"]


def test_a_dataclass_without_tyro_is_no_command_line(tmp_path):
    script = write(tmp_path, "train.py", "from dataclasses import dataclass\n@dataclass\nclass C:\n    workers: int = 2\n")
    assert read_options(script) == []


def test_a_script_that_does_not_parse_or_is_missing_gives_no_options(tmp_path):
    broken = write(tmp_path, "broken.py", "def (:\n")
    assert read_options(broken) == []
    meta = {"kind": "script", "target": str(tmp_path / "gone.py"), "command": ["python", str(tmp_path / "gone.py")]}
    assert program_options(meta) is None


def test_the_program_is_the_runs_script_with_its_command(tmp_path):
    script = write(tmp_path, "train.py", "import argparse\nargparse.ArgumentParser().add_argument('--workers')\n")
    command = ["torchrun", "--nproc-per-node=2", script, "--epochs", "3"]
    found = program_options({"kind": "command", "target": "torchrun", "command": command})
    assert found["script"] == script and found["command"] == command
    assert [o["flags"] for o in found["options"]] == [["--workers"]]



def test_a_hydra_scripts_options_are_its_configs_keys_set_as_overrides(tmp_path):
    pytest.importorskip("yaml")
    from gpuprof.advise.flag_terms import COMPILATION, WORKERS, command_line
    from tests.unit.fixes.cases import evidence
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "config.yaml").write_text("data:\n  num_workers: 2\n  path: /data\ntrainer:\n  compile: false\n")
    script = write(tmp_path, "train.py", """
        import hydra
        @hydra.main(version_base=None, config_path="conf", config_name="config")
        def main(cfg):
            pass
    """)
    options = by_flag(read_options(script))
    assert options["data.num_workers"]["style"] == "hydra" and options["data.num_workers"]["type"] == "int"
    ev = evidence(program={"command": ["python", script, "data.num_workers=2"], "script": script,
                           "options": list(options.values())})
    assert command_line(ev, WORKERS, 4)[0] == f"python {script} data.num_workers=4"
    assert command_line(ev, COMPILATION, True)[0] == f"python {script} data.num_workers=2 trainer.compile=true"
