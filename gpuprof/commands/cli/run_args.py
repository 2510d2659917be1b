"""`gpuprof run`'s command line read without Typer: a plain run starts the program ~40 ms sooner.

`read_run_args` accepts only lines it reads exactly as the Typer command does (a test holds the two
to the same answers) and returns None for everything else (help, unknown options, malformed
values), which then goes through Typer for its messages."""

VALUE_OPTIONS = {
    "--out": ("out", str), "--json": ("json_path", str), "--interval": ("interval", float),
    "--steps": ("steps", int), "--warmup-steps": ("warmup_steps", int), "--gate": ("gate_config", str),
    "--junit": ("junit", str), "--markdown": ("markdown", str), "--python": ("python", str),
    "--html": ("html", str), "--trace": ("trace", str),
    "--peak-tflops": ("peak_tflops", float), "--price-per-gpu-hour": ("price_per_gpu_hour", float),
}
FLAGS = {
    "--probes": ("probes", True), "--no-probes": ("probes", False), "--gpu": ("gpu", True),
    "--no-gpu": ("gpu", False), "--quiet": ("quiet", True), "-q": ("quiet", True), "--no-quiet": ("quiet", False),
    "--live": ("live", True), "--no-live": ("live", False), "--verify": ("verify", True),
    "--strict": ("strict", True),
}
MODULE_OPTIONS = ("-m", "--module")


def _is_module_option(arg: str) -> bool:
    """-m MODULE, --module MODULE, --module=MODULE or -mMODULE: the user's program starts here."""
    return arg in MODULE_OPTIONS or arg.startswith("--module=") or (arg.startswith("-m") and not arg.startswith("--"))


def read_run_args(args):
    """The fields of the RunRequest (gpuprof.commands.workflows.options) for `run ...`, or None when Typer
    should read the line."""
    if not args or args[0] != "run":
        return None
    rest = args[1:]
    options = {}
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg == "--":
            command = rest[i + 1:]
            return dict(options, target=command, command_mode=True) if command else None
        if _is_module_option(arg):
            if arg in MODULE_OPTIONS:
                if i + 1 >= len(rest) or rest[i + 1].startswith("-"):
                    return None
                module, after = rest[i + 1], rest[i + 2:]
            else:
                module, after = (arg.split("=", 1)[1] if arg.startswith("--") else arg[2:]), rest[i + 1:]
            return dict(options, module=module, target=after or None) if module else None
        if not arg.startswith("-") or arg == "-":
            return dict(options, target=rest[i:])
        name, has_value, value = arg.partition("=")
        if name in VALUE_OPTIONS:
            if not has_value:
                if i + 1 >= len(rest) or rest[i + 1].startswith("-"):
                    return None
                value = rest[i + 1]
                i += 1
            key, convert = VALUE_OPTIONS[name]
            try:
                options[key] = convert(value)
            except ValueError:
                return None
        elif arg in FLAGS:
            key, flag = FLAGS[arg]
            options[key] = flag
        else:
            return None
        i += 1
    return None


def split_user_args(args, value_options) -> list:
    """Insert `--` where gpuprof's options end, marking the `-- COMMAND` form with --command-mode."""
    out = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return out + ["--command-mode", "--"] + args[i + 1:]
        if arg in MODULE_OPTIONS:
            return out + args[i:i + 2] + ["--"] + args[i + 2:]
        if _is_module_option(arg):
            name, value = ("--module", arg.split("=", 1)[1]) if arg.startswith("--") else ("-m", arg[2:])
            return out + [name, value, "--"] + args[i + 1:]
        if not arg.startswith("-") or arg == "-":
            return out + ["--"] + args[i:]
        out.append(arg)
        if "=" not in arg and arg in value_options and i + 1 < len(args):
            out.append(args[i + 1])
            i += 1
        i += 1
    return out
