"""A fix as the program's own command line, where the script has an option that makes the change.

A model zoo's training script takes `--amp`, `--torchcompile`, `--channels-last`, `-j/--workers`;
an RL script `--num-envs`, `--async` or `--vec-env subproc`. Where the run's script declares such an option (read from its source,
gpuprof.judge.sections.script_flags), the fix's first line is the run's command with that option set,
and the code change comes second. An option matches a knob by its names, else by its help text."""

import os
import re
import shlex
from typing import Optional

PRECISION, COMPILATION, LAYOUT, WORKERS, PINNED = "precision", "compilation", "layout", "workers", "pinned"
ENVS, ACCUMULATION, BATCH, TF32_MATMUL = "envs", "accumulation", "batch", "tf32_matmul"
#: The vector env's sub-environments stepped in processes (SubprocVecEnv, AsyncVectorEnv): a switch,
#: or the choice that names processes among an option's choices (`--vec-env {dummy,subproc}`).
PARALLEL_ENVS = "parallel_envs"


def words(text: str) -> frozenset:
    return frozenset(text.split())


#: Option names (lower case, without dashes or underscores) that make each change.
NAMES = {
    PRECISION: words("amp useamp fp16 bf16 mixedprecision precision half"),
    COMPILATION: words("compile torchcompile usecompile compilemodel"),
    LAYOUT: words("channelslast uselayoutchannelslast"),
    WORKERS: words("j workers numworkers nworkers dataloaderworkers dataloadernumworkers loaderworkers"),
    PINNED: words("pinmem pinmemory"),
    ENVS: words("numenvs nenvs envs numenv"),
    ACCUMULATION: words("gradaccum gradaccumsteps gradientaccumulationsteps accumulationsteps accumsteps "
                        "accumulategradbatches gradaccumulation gradaccumulationsteps accumiter"),
    BATCH: words("b batchsize bs trainbatchsize"),
    TF32_MATMUL: words("tf32 allowtf32"),
    PARALLEL_ENVS: words("async asyncenv asyncenvs asyncvectorenv useasync subproc subprocenv subprocenvs subprocvecenv "
                         "usesubproc vecenv vecenvcls vecenvclass vecenvtype vecenvkind vectorenv vectorenvcls "
                         "vectorizationmode vectorisationmode"),
}
#: Help text that makes an option with another name match.
HELP = {
    PRECISION: re.compile(r"mixed.precision|automatic mixed|\bamp\b", re.I),
    COMPILATION: re.compile(r"torch\.compile", re.I),
    LAYOUT: re.compile(r"channels.last", re.I),
    WORKERS: re.compile(r"(data.?load(ing|er)|loader) workers|number of workers", re.I),
    PINNED: re.compile(r"pin(ned)? (cpu )?mem", re.I),
    ENVS: re.compile(r"(parallel|vector|number of) (game )?env", re.I),
    ACCUMULATION: re.compile(r"gradient accumulation|accumulate gradients", re.I),
    BATCH: re.compile(r"^(input |training |mini-?)?batch size", re.I),
    PARALLEL_ENVS: re.compile(r"subproc|async(hronous)?\s*(vector|vec)?\s*env|vectori[sz]ed env(ironment)?s?\b.*"
                              r"(class|kind|type)|env(ironment)?s? in (parallel )?(sub)?process", re.I),
}
#: Knobs switched on by a flag; the others take a number.
SWITCHES = (PRECISION, COMPILATION, LAYOUT, PINNED, TF32_MATMUL)
DTYPE_NAMES = words("dtype ampdtype precisiondtype mixedprecisiondtype")
ON_ACTIONS = ("store_true", "BooleanOptionalAction", "store_const", "hydra_bool")
SHORT_DTYPES = {"bfloat16": "bf16", "float16": "fp16"}


def _norm(flag: str) -> str:
    """`--num-workers` and hydra's `data.num_workers` alike: `numworkers`."""
    return flag.lstrip("-").rsplit(".", 1)[-1].lower().replace("-", "").replace("_", "")


def matching_option(options, knob: str):
    """The script's option that makes the change `knob`, or None: by name first, then by help."""
    usable = [o for o in options or () if _usable(o, knob)]
    named = [o for o in usable if any(_norm(f) in NAMES[knob] for f in o["flags"])]
    if named:
        return named[0]
    pattern = HELP.get(knob)
    helped = [o for o in usable if pattern and isinstance(o.get("help"), str) and pattern.search(o["help"])]
    return helped[0] if helped else None


def _usable(option: dict, knob: str) -> bool:
    if knob == PARALLEL_ENVS:
        return option.get("action") in ON_ACTIONS or bool(parallel_choice(option))
    if knob in SWITCHES:
        return option.get("action") in ON_ACTIONS or bool(_choice_for(option, "bfloat16"))
    return option.get("action") in (None, "store", "hydra") and option.get("type") in (None, "int")


#: Words in a choice that name sub-environments stepped in processes.
PARALLEL_CHOICE = re.compile(r"subproc|async|process|parallel", re.I)


def parallel_choice(option: dict):
    """The choice of a `--vec-env {dummy,subproc}`-style option that steps the envs in processes."""
    for choice in option.get("choices") or ():
        if PARALLEL_CHOICE.search(str(choice)):
            return str(choice)
    return None


def _choice_for(option: dict, dtype: str):
    """The choice of a `--precision {32,bf16-mixed,16-mixed}`-style option that means `dtype`."""
    for choice in option.get("choices") or ():
        text = str(choice).lower()
        if (dtype == "bfloat16" and "bf16" in text) or \
                (dtype == "float16" and "16" in text and "bf" not in text and "32" not in text):
            return str(choice)
    return None


def command_line(ev, knob: str, value=None) -> Optional[tuple[str, str]]:
    """(the run's command with the option set, the option's flags in words) or None where the
    script has no such option, the command is unknown, or it sets the option already."""
    return command_line_for(ev, [(knob, value)])


def command_line_for(ev, changes) -> Optional[tuple[str, str]]:
    """(the run's command with every (knob, value) of `changes` set through the script's options,
    their flags in words), or None unless the script has an option for each."""
    program = getattr(ev, "program", None) or {}
    command = list(program.get("command") or ())
    argv, named = command, []
    for knob, value in changes:
        option = matching_option(program.get("options"), knob)
        if option is None or not argv:
            return None
        argv = _set(argv, program.get("options"), option, knob, value)
        if argv is None:
            return None
        named.append("/".join(option["flags"]))
    if argv == command:
        return None
    return display(argv), " and ".join(named)


def _set(argv: list, options, option: dict, knob: str, value):
    """`argv` with `option` set for `knob` (None where it cannot be)."""
    if option.get("choices") and knob == PRECISION:
        return _with_value(argv, option, _choice_for(option, value or "bfloat16"))
    if knob == PARALLEL_ENVS:
        choice = parallel_choice(option)
        if choice is not None:
            return None if _current_value(argv, option) == choice else _with_value(argv, option, choice)
        return _with_switch(argv, option)
    if knob not in SWITCHES:
        return _with_value(argv, option, value)
    switched = _with_switch(argv, option)
    dtype = _dtype_option(options, option)
    if switched is not None and dtype is not None and knob == PRECISION and value:
        switched = _with_value(switched, dtype, _dtype_words(dtype, value))
    return switched


def _dtype_option(options, switch: dict):
    """`--amp-dtype` beside `--amp`: the option that picks the low-precision type."""
    for option in options or ():
        if option is not switch and any(_norm(f) in DTYPE_NAMES for f in option["flags"]) and \
                option.get("action") in (None, "store"):
            return option
    return None


def _dtype_words(option: dict, dtype: str) -> str:
    spelled = [str(c) for c in option.get("choices") or ()] + [str(option.get("default") or "")]
    return dtype if dtype in spelled or not any(c in SHORT_DTYPES.values() for c in spelled) else SHORT_DTYPES[dtype]


def _current_value(argv: list, option: dict):
    """The value the command gives the option, or None."""
    flags = option["flags"]
    for i, arg in enumerate(argv):
        if arg in flags and i + 1 < len(argv):
            return argv[i + 1]
        for flag in flags:
            if arg.startswith(flag + "="):
                return arg.split("=", 1)[1]
    return None


def _with_switch(command: list, option: dict):
    if option.get("style") == "hydra":
        return None if f"{option['flags'][0]}=true" in command else _with_value(command, option, "true")
    flags = option["flags"]
    on = [f for f in flags if not f.startswith("--no-")]
    if any(arg in on for arg in command):
        return None             # set already, and the fix applies still: the option is no knob here
    argv = [a for a in command if a not in flags]
    return argv + [_long(on or flags)]


def _with_value(command: list, option: dict, value):
    if value is None:
        return None
    flags, argv = option["flags"], list(command)
    if option.get("style") == "hydra":
        key = flags[0]
        at = [i for i, arg in enumerate(argv) if arg.lstrip("+").split("=", 1)[0] == key]
        setting = f"{key}={value}"
        return argv[:at[0]] + [setting] + argv[at[0] + 1:] if at else argv + [setting]
    for i, arg in enumerate(argv):
        if arg in flags and i + 1 < len(argv):
            return argv[:i + 1] + [str(value)] + argv[i + 2:]
        for flag in flags:
            if arg.startswith(flag + "=") or (len(flag) == 2 and arg.startswith(flag) and arg[2:].isdigit()):
                return argv[:i] + [f"{flag}={value}" if "=" in arg else f"{flag}{value}"] + argv[i + 1:]
    return argv + [_long(flags), str(value)]


def _long(flags: list) -> str:
    return max(flags, key=lambda f: (f.startswith("--"), len(f)))


def display(argv: list) -> str:
    """The command as the user would type it: the interpreter as `python`."""
    first = os.path.basename(argv[0])
    head = ["python"] if first.startswith("python") else [argv[0]]
    return shlex.join(head + argv[1:])


def command_first(ev, knob: str, value, snippet: str, also=(), env=None) -> str:
    """`snippet` with the command line that makes the same change through the script's own option
    above it, where the script has one (and one for each (knob, value) of `also`); `env`: variables
    the command sets for the rest of the change (OMP_NUM_THREADS for torch's intra-op threads)."""
    found = command_line_for(ev, [(knob, value), *also])
    if found is None:
        return snippet
    line, flags = found
    said = f"the script's own {flags} " + ("options" if also else "option")
    if env:
        line = " ".join(f"{k}={v}" for k, v in env.items()) + " " + line
        said += ", and " + ", ".join(env) + " for torch's intra-op threads"
    return f"{line}\n# {said}; or in the code:\n{snippet}"
