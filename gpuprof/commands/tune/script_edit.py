"""Process-wide settings written into the script, right after its own `import torch` (or, where it
has none at the top level, after its leading imports together with one): the intra-op threads, and
on a GPU the cuDNN and TF32 flags. A call the script already makes (`torch.set_num_threads(4)`) gets
the new value in place. libcst keeps the rest of the file as it was."""

import libcst as cst

from gpuprof.commands.tune.loader_edit import EditError

NOTE = "  # set by gpuprof tune"


def lines_for(settings: dict, torch_name: str) -> list:
    """(statement, the call or assignment target it replaces) for each setting the script carries."""
    out = []
    if "torch_threads" in settings:
        out.append((f"{torch_name}.set_num_threads({int(settings['torch_threads'])})", f"{torch_name}.set_num_threads"))
    if settings.get("cudnn_benchmark") is not None:
        out.append((f"{torch_name}.backends.cudnn.benchmark = {bool(settings['cudnn_benchmark'])}",
                    f"{torch_name}.backends.cudnn.benchmark"))
    if settings.get("allow_tf32") is not None:
        flag = bool(settings["allow_tf32"])
        out.append((f"{torch_name}.backends.cuda.matmul.allow_tf32 = {flag}", f"{torch_name}.backends.cuda.matmul.allow_tf32"))
        out.append((f"{torch_name}.backends.cudnn.allow_tf32 = {flag}", f"{torch_name}.backends.cudnn.allow_tf32"))
    return out


def edit_script(source: str, settings: dict) -> str:
    """The script's text with the process settings in `settings` written in."""
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise EditError(f"cannot parse it ({str(exc).splitlines()[0]})")
    body = list(module.body)
    at, name = _torch_import(body)
    statements = lines_for(settings, name or "torch")
    if not statements:
        return source
    missing = []
    for text, target in statements:
        found = _existing(body, target)
        if found is None:
            missing.append(text)
        else:
            body[found] = _replaced(body[found], text)
    if missing:
        new = [cst.parse_statement(text + NOTE + "\n") for text in missing]
        if at is None:
            at = _after_leading_imports(body)
            new.insert(0, cst.parse_statement("import torch\n"))
        body[at + 1:at + 1] = new
    return module.with_changes(body=body).code


def _torch_import(body: list):
    """(index, name) of the top-level statement that imports torch itself, or (None, None)."""
    for index, statement in enumerate(body):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if cst.Module([]).code_for_node(alias.name) == "torch":
                        as_name = alias.asname.name.value if alias.asname else "torch"
                        return index, as_name
    return None, None


def _after_leading_imports(body: list) -> int:
    """The index after which new lines go when the script has no `import torch`: after its first
    run of imports (docstring and `from __future__` included), else -1 (the top)."""
    at = -1
    for index, statement in enumerate(body):
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and statement.body else None
        if isinstance(small, (cst.Import, cst.ImportFrom)) or (index == 0 and isinstance(small, cst.Expr)
                                                                and isinstance(small.value, cst.SimpleString)):
            at = index
            continue
        break
    return at


def _existing(body: list, target: str):
    """The top-level statement that already calls or assigns `target`, or None."""
    for index, statement in enumerate(body):
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            continue
        small = statement.body[0]
        code = cst.Module([]).code_for_node(small)
        if code.startswith(target + "(") or code.replace(" ", "").startswith(target + "="):
            return index
    return None


def _replaced(statement: cst.SimpleStatementLine, text: str) -> cst.SimpleStatementLine:
    """The statement with the new text, its trailing comment and leading lines kept."""
    return statement.with_changes(body=[cst.parse_statement(text + "\n").body[0]])

