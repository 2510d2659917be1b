"""A fix as the program's own command line: the script's option found by its names or its help,
the run's command with it set (appended, or changed where the command gives it already)."""

from gpuprof.advise import flag_terms
from gpuprof.advise.flag_terms import (ACCUMULATION, BATCH, COMPILATION, ENVS, LAYOUT, PINNED, PRECISION, WORKERS,
                                       command_first, command_line)
from tests.unit.fixes.cases import evidence


def option(*flags, action=None, type=None, choices=None, help=None, default=None):
    return {"flags": list(flags), "dest": flags[-1].lstrip("-").replace("-", "_"), "type": type, "default": default,
            "action": action, "choices": choices, "help": help}


ZOO = [option("-b", "--batch-size", type="int", default=128),
       option("-j", "--workers", type="int", default=4, help="number of data loading workers"),
       option("--amp", action="store_true", help="use automatic mixed precision"),
       option("--amp-dtype", default="float16", choices=["float16", "bfloat16"]),
       option("--torchcompile", action="store_true"),
       option("--channels-last", action="store_true"),
       option("--pin-mem", action="store_true"),
       option("--grad-accum-steps", type="int", default=1)]


def run(command, options=ZOO):
    return evidence(program={"command": command, "script": command[1], "options": options})


def test_an_option_the_command_lacks_is_appended_with_the_value_by_its_long_flag():
    ev = run(["/venv/bin/python3.12", "train.py", "--epochs", "3"])
    assert command_line(ev, WORKERS, 4) == ("python train.py --epochs 3 --workers 4", "-j/--workers")
    assert command_line(ev, BATCH, 256)[0] == "python train.py --epochs 3 --batch-size 256"
    assert command_line(ev, ACCUMULATION, 4)[0] == "python train.py --epochs 3 --grad-accum-steps 4"
    assert command_line(ev, COMPILATION, True)[0] == "python train.py --epochs 3 --torchcompile"
    assert command_line(ev, LAYOUT, True)[0] == "python train.py --epochs 3 --channels-last"
    assert command_line(ev, PINNED, True)[0] == "python train.py --epochs 3 --pin-mem"
    assert command_line(ev, ENVS, 16) is None            # no such option: the code change alone


def test_an_option_the_command_gives_is_changed_where_it_stands():
    assert command_line(run(["python", "train.py", "-j", "2", "data/"]), WORKERS, 4)[0] == \
        "python train.py -j 4 data/"
    assert command_line(run(["python", "train.py", "--workers=2"]), WORKERS, 4)[0] == "python train.py --workers=4"
    assert command_line(run(["python", "train.py", "-j2"]), WORKERS, 4)[0] == "python train.py -j4"


def test_a_switch_set_already_is_no_knob_and_the_amp_dtype_comes_with_amp():
    assert command_line(run(["python", "train.py", "--torchcompile"]), COMPILATION, True) is None
    line, flags = command_line(run(["python", "train.py"]), PRECISION, "bfloat16")
    assert line == "python train.py --amp --amp-dtype bfloat16" and flags == "--amp"
    short = ZOO[:2] + [option("--fp16", action="store_true"), option("--dtype", choices=["fp16", "bf16"])]
    assert command_line(run(["python", "train.py"], short), PRECISION, "bfloat16")[0] == \
        "python train.py --fp16 --dtype bf16"


def test_a_precision_option_with_choices_takes_the_choice_that_means_the_type():
    options = [option("--precision", choices=["32-true", "16-mixed", "bf16-mixed"], default="32-true")]
    assert command_line(run(["python", "fit.py"], options), PRECISION, "bfloat16")[0] == \
        "python fit.py --precision bf16-mixed"
    assert command_line(run(["python", "fit.py"], options), PRECISION, "float16")[0] == \
        "python fit.py --precision 16-mixed"


def test_an_option_named_otherwise_matches_by_its_help_and_wrong_kinds_never_match():
    options = [option("--nproc-data", type="int", help="Number of data loading workers per GPU"),
               option("--envs-per-worker", type="str", help="number of parallel envs"),
               option("--workers-file", type="str")]
    ev = run(["python", "rl.py"], options)
    assert command_line(ev, WORKERS, 8)[0] == "python rl.py --nproc-data 8"
    assert command_line(ev, ENVS, 16) is None       # a string option is no count
    assert flag_terms.matching_option([option("--workers", type="str", action="append")], WORKERS) is None


def test_a_launcher_command_keeps_its_launcher_and_quotes_what_needs_it():
    ev = run(["torchrun", "--nproc-per-node=2", "my train.py"])
    assert command_line(ev, WORKERS, 3)[0] == "torchrun --nproc-per-node=2 'my train.py' --workers 3"


def test_the_command_comes_first_and_the_code_second_only_where_the_script_has_the_option():
    snippet = "DataLoader(dataset, num_workers=4, ...)"
    first = command_first(run(["python", "train.py"]), WORKERS, 4, snippet).splitlines()
    assert first[0] == "python train.py --workers 4" and first[-1] == snippet
    assert command_first(evidence(), WORKERS, 4, snippet) == snippet


def test_workers_that_come_with_fewer_intra_op_threads_set_them_on_the_command_line_too():
    """On a CPU-only machine more workers come with fewer training threads: the command sets both."""
    from gpuprof.advise.fixes import num_workers
    from tests.unit.fixes.cases import LOADER, situation
    ev = evidence(cpu_count=4, loader=dict(LOADER, torch_threads=4),
                  program={"command": ["python", "train.py"], "script": "train.py", "options": ZOO})
    built = num_workers.build(ev, situation("input.cpu", 0.6))
    threads = built["change"].get("torch_threads")
    assert threads is not None, built
    first = built["snippet"].splitlines()[0]
    assert first == f"OMP_NUM_THREADS={threads} python train.py --workers {built['change']['num_workers']}"


def test_the_vector_envs_processes_by_a_choice_or_a_switch_of_the_scripts_own():
    from gpuprof.advise.flag_terms import PARALLEL_ENVS
    choices = [option("--vec-env", choices=["dummy", "subproc"], default="dummy")]
    assert command_line(run(["python", "ppo.py"], choices), PARALLEL_ENVS, True) == \
        ("python ppo.py --vec-env subproc", "--vec-env")
    assert command_line(run(["python", "ppo.py", "--vec-env", "dummy"], choices), PARALLEL_ENVS, True)[0] == \
        "python ppo.py --vec-env subproc"
    assert command_line(run(["python", "ppo.py", "--vec-env", "subproc"], choices), PARALLEL_ENVS, True) is None
    switch = [option("--async-envs", action="store_true")]
    assert command_line(run(["python", "ppo.py"], switch), PARALLEL_ENVS, True)[0] == "python ppo.py --async-envs"
    by_help = [option("--mode", choices=["sync", "async"], help="vectorisation: environments in subprocesses")]
    assert command_line(run(["python", "ppo.py"], by_help), PARALLEL_ENVS, True)[0] == "python ppo.py --mode async"
    # Neither a choice that names processes nor a switch: no knob.
    assert command_line(run(["python", "ppo.py"], [option("--vec-env", choices=["dummy"])]), PARALLEL_ENVS, True) \
        is None
    assert command_line(run(["python", "ppo.py"]), PARALLEL_ENVS, True) is None
