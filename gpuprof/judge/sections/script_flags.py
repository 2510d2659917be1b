"""The options a training script's own command line takes, read from its source, never run.

A script with a `--workers` or `--amp` option is changed by its command line, not by editing
its code. At report time the script named in the run's command (and the modules it imports from
its own folder) is parsed with `ast` for argparse's `add_argument(...)`, click's `@click.option(...)`
and the fields of dataclasses handed to tyro: each option's flags, dest, type, default, action,
choices and help, where the source states them as literals. A `@hydra.main(config_path=...,
config_name=...)` script's options are the scalar keys of that YAML file (where PyYAML is
installed), set as `key=value` overrides (`style: "hydra"`)."""

import ast
import os

MAX_BYTES = 2_000_000      # a larger file is no hand-written training script
MAX_MODULES = 12           # the script and the modules of its own folder it imports


def program_options(meta: dict) -> dict | None:
    """{"command", "script", "options"} for the run's script, or None when no script is found."""
    command = [str(a) for a in meta.get("command") or []]
    script = script_path(meta, command)
    if script is None:
        return None
    return {"command": command, "script": script, "options": read_options(script)}


def script_path(meta: dict, command: list):
    """The run's script as a readable path (relative to the working directory as the run's
    command gave it, or absolute), or None."""
    candidates = [meta.get("target")] if meta.get("kind") == "script" else []
    candidates += [a for a in command if a.endswith(".py")]
    for path in candidates:
        if path and os.path.isfile(path):
            return path
    return None


def read_options(script: str) -> list:
    """Every option the script and the modules it imports from its own folder declare."""
    options: list = []
    seen: set = set()
    queue = [os.path.abspath(script)]
    while queue and len(seen) < MAX_MODULES:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        tree = _parse(path)
        if tree is None:
            continue
        options.extend(module_options(tree))
        options.extend(hydra_options(tree, os.path.dirname(path)))
        queue.extend(_local_imports(tree, os.path.dirname(path)))
    return options


def _parse(path: str):
    try:
        if os.path.getsize(path) > MAX_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return ast.parse(handle.read(), filename=path)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _local_imports(tree, folder: str) -> list:
    """Files of the script's own folder that it imports (`import cfg`, `from args import x`)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level == 1:
            names += [node.module] if node.module else [alias.name for alias in node.names]
    found = []
    for name in names:
        base = os.path.join(folder, *name.split("."))
        for path in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.isfile(path):
                found.append(path)
                break
    return found


def module_options(tree) -> list:
    """The options one module's source declares."""
    options = []
    uses_tyro = any(_imports(node, "tyro") for node in ast.walk(tree))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node) == "add_argument":
            option = _argparse_option(node)
        elif isinstance(node, ast.Call) and _called(node) == "option" and _is_click(node):
            option = _click_option(node)
        elif uses_tyro and isinstance(node, ast.ClassDef) and _is_dataclass(node):
            options.extend(_dataclass_options(node))
            continue
        else:
            continue
        if option:
            options.append(option)
    return options


def _imports(node, package: str) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] == package for alias in node.names)
    return isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == package


def _called(call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _is_click(call) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "click"


def _literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _name(node):
    """`int`, `str`, `argparse.BooleanOptionalAction` as text, a literal as itself, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return _literal(node)


def _argparse_option(call) -> dict | None:
    flags = [_literal(a) for a in call.args]
    flags = [f for f in flags if isinstance(f, str) and f.startswith("-")]
    if not flags:
        return None         # a positional argument: no flag to set
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    longest = max(flags, key=len).lstrip("-")
    option = {"flags": flags, "dest": _literal(keywords["dest"]) if "dest" in keywords else longest.replace("-", "_"),
              "type": _name(keywords["type"]) if "type" in keywords else None,
              "default": _literal(keywords["default"]) if "default" in keywords else None,
              "action": _name(keywords["action"]) if "action" in keywords else None,
              "choices": _literal(keywords["choices"]) if "choices" in keywords else None,
              "help": _literal(keywords["help"]) if "help" in keywords else None}
    default = option["default"]
    if option["type"] is None and isinstance(default, (int, float)) and not isinstance(default, bool):
        option["type"] = type(default).__name__
    return option


def _click_option(call) -> dict | None:
    flags = []
    for arg in call.args:
        text = _literal(arg)
        if isinstance(text, str):
            flags += [f for f in text.split("/") if f.startswith("-")]
    if not flags:
        return None
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    paired = any("/" in (_literal(a) or "") for a in call.args if isinstance(_literal(a), str))
    flag = _literal(keywords["is_flag"]) if "is_flag" in keywords else False
    action = "BooleanOptionalAction" if paired else "store_true" if flag else None
    default = _literal(keywords["default"]) if "default" in keywords else None
    kind = _name(keywords["type"]) if "type" in keywords else (type(default).__name__ if default is not None else None)
    return {"flags": flags, "dest": flags[0].lstrip("-").replace("-", "_"), "type": kind, "default": default,
            "action": action, "choices": None, "help": _literal(keywords["help"]) if "help" in keywords else None}


def hydra_options(tree, folder: str) -> list:
    """The scalar keys of the primary config a `@hydra.main(...)` names, as `key=value` overrides."""
    options = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _called(node) == "main" and _is_hydra(node)):
            continue
        keywords = {k.arg: _literal(k.value) for k in node.keywords if k.arg}
        path, name = keywords.get("config_path"), keywords.get("config_name")
        if isinstance(path, str) and isinstance(name, str):
            options += [_hydra_option(key, value) for key, value in
                        _flat(_yaml(os.path.join(folder, path, name + ".yaml")))]
    return options


def _is_hydra(call) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "hydra"


def _yaml(path: str) -> dict:
    try:
        import yaml
        if os.path.getsize(path) > MAX_BYTES:
            return {}
        with open(path, encoding="utf-8") as handle:
            loaded = yaml.safe_load(handle)
    except Exception:       # no PyYAML, no file, no YAML: no options
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _flat(tree: dict, prefix: str = ""):
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from _flat(value, f"{prefix}{key}.")
        elif isinstance(value, (bool, int, float, str)) or value is None:
            yield f"{prefix}{key}", value


def _hydra_option(key: str, value) -> dict:
    kind = type(value).__name__ if value is not None else None
    return {"flags": [key], "dest": key.rsplit(".", 1)[-1], "type": kind, "default": value,
            "action": "hydra_bool" if kind == "bool" else "hydra", "choices": None, "help": None, "style": "hydra"}


def _is_dataclass(node) -> bool:
    return any(_name(d.func if isinstance(d, ast.Call) else d) == "dataclass" for d in node.decorator_list)


def _dataclass_options(node) -> list:
    """tyro's flags for a dataclass's fields: `--num-workers` for `num_workers: int = 4`, a bool
    field as `--amp` / `--no-amp`."""
    options = []
    for item in node.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        name = item.target.id
        kind = _name(item.annotation)
        default = _literal(item.value) if item.value is not None else None
        flag = "--" + name.replace("_", "-")
        boolean = kind == "bool"
        options.append({"flags": [flag] + ([f"--no-{name.replace('_', '-')}"] if boolean else []), "dest": name,
                        "type": kind, "default": default, "action": "BooleanOptionalAction" if boolean else None,
                        "choices": None, "help": _docstring_after(node, item)})
    return options


def _docstring_after(node, item):
    """A field's help in tyro's style: the string literal right after it, if any."""
    body = node.body
    at = body.index(item)
    if at + 1 < len(body) and isinstance(body[at + 1], ast.Expr):
        text = _literal(body[at + 1].value)
        return text if isinstance(text, str) else None
    return None
