"""The fix registry holds everything about a fix in its own module: these checks keep it that way
(every fix registered and documented, every change key handled by the probes, no fix id named
outside the fixes package, the try help read from the declarations)."""

import os
import pkgutil
import re

from gpuprof.advise import fixes
from gpuprof.capture.probes import variants as probe_variants
from gpuprof.record import changes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "gpuprof")


def read(*parts) -> str:
    with open(os.path.join(ROOT, *parts), "r", encoding="utf-8") as handle:
        return handle.read()


def test_every_fix_module_is_registered_once_under_its_own_id():
    modules = {name for _, name, _ in pkgutil.iter_modules(fixes.__path__)}
    registered = fixes.SPEED + fixes.MEMORY + fixes.SHARED_MEMORY
    assert len({fix.id for fix in registered}) == len(registered)
    assert modules == {fix.build.__module__.rsplit(".", 1)[1] for fix in registered}
    for fix in registered:
        module = fix.build.__module__.rsplit(".", 1)[1]
        assert module == fix.id.replace("-", "_").replace("8bit", "eight_bit"), (module, fix.id)


def test_every_change_key_a_fix_sets_is_declared_and_has_a_probe_handler():
    for fix in fixes.tryable():
        for key in fix.try_keys:
            assert key in changes.KEYS, f"{fix.id}: {key} is not declared in gpuprof/record/changes.py"
            assert key in probe_variants.HANDLERS, f"{fix.id}: no probe applies {key}"
    assert set(changes.KEYS) == set(probe_variants.HANDLERS)


def test_a_fix_try_can_apply_says_how_to_keep_it():
    for fix in fixes.tryable():
        assert fix.keep is not None and fix.keep(dict.fromkeys(fix.try_keys, 2), "train.py:7"), fix.id


def test_every_fix_has_a_row_in_the_docs():
    advice, memory, limits = read("docs", "advice.md"), read("docs", "memory.md"), read("docs", "machine-limits.md")
    for fix in fixes.SPEED:
        assert f"| `{fix.id}` |" in advice, f"{fix.id} has no row in docs/advice.md"
    for fix in fixes.MEMORY:
        assert f"| `{fix.id}` |" in memory, f"{fix.id} has no row in docs/memory.md"
    for fix in fixes.SHARED_MEMORY:
        assert f"| `{fix.id}` |" in limits, f"{fix.id} has no row in docs/machine-limits.md"


def test_no_module_outside_the_fixes_package_names_a_fix_id():
    ids = re.compile("[\"'](" + "|".join(re.escape(i) for i in fixes.ids()) + ")[\"']")
    for folder, _, files in os.walk(PACKAGE):
        # The simulated GPU's scenarios name the fixes they expect, as tests do.
        if os.path.join("advise", "fixes") in folder or os.path.join(PACKAGE, "testing") in folder:
            continue
        for name in files:
            if name.endswith(".py"):
                found = ids.search(read(folder, name))
                assert found is None, f"{os.path.join(folder, name)} names the fix {found.group(1)}"


def test_modules_of_advice_render_and_cli_stay_small():
    for part in ("advise", os.path.join("present", "render"), os.path.join("commands", "cli"),
                 os.path.join("commands", "workflows")):
        assert os.path.isdir(os.path.join(PACKAGE, part)), part
        for folder, _, files in os.walk(os.path.join(PACKAGE, part)):
            for name in files:
                if name.endswith(".py"):
                    lines = read(folder, name).count("\n")
                    assert lines <= 320, f"{os.path.join(folder, name)} has {lines} lines"


def test_no_cli_command_module_imports_another():
    cli = os.path.join(PACKAGE, "commands", "cli")
    for name in os.listdir(cli):
        if name.endswith(".py") and name not in ("__init__.py", "app.py"):
            assert "gpuprof.commands.cli" not in read(cli, name), f"gpuprof/commands/cli/{name} imports another CLI module"


def test_try_help_lists_every_settable_key_and_every_fix_it_can_apply():
    from typer.testing import CliRunner
    from gpuprof.commands.cli.app import app, register_commands

    register_commands()
    result = CliRunner().invoke(app, ["try", "--help"], terminal_width=400)
    text = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    for key in changes.SETTABLE:
        assert key in text
    for fix in fixes.tryable():
        assert fix.id in text


def test_set_takes_each_key_as_declared():
    from gpuprof.commands.experiments.variants import parse_set
    from gpuprof.errors import UsageProblem
    import pytest

    assert [v.settings for v in parse_set(["torch_threads=1,2"])] == [{"torch_threads": 1}, {"torch_threads": 2}]
    assert parse_set(["pin-memory=yes"])[0].label == "pin_memory=true"
    with pytest.raises(UsageProblem, match="must be at least 1, not 0"):
        parse_set(["prefetch_factor=0"])
    with pytest.raises(UsageProblem, match="not a setting try can change"):
        parse_set(["echo=2"])


def test_echo_and_hdf5_options_stand_for_their_fixes():
    from gpuprof.commands.experiments.variants import echo, hdf5_cache
    assert echo(2).fix_id == fixes.batch_echoing.FIX.id and echo(2).label == "echo x2"
    assert hdf5_cache(1 << 20).fix_id == fixes.hdf5_chunk_cache.FIX.id


def test_every_event_kind_constant_is_declared_with_its_columns():
    from gpuprof.record import kinds
    constants = {value for name, value in vars(kinds).items() if name.isupper() and isinstance(value, str)}
    assert constants == set(kinds.KINDS)
    assert all(kind.static[0] == "k" for kind in kinds.STREAMS.values())
    for folder, _, files in os.walk(os.path.join(PACKAGE, "probes")):
        for name in files:
            if name.endswith(".py"):
                assert not re.search(r'"k":\s*"', read(folder, name)), f"probes/{name} names an event kind by hand"
