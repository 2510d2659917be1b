"""The DataLoader call at a line given the keyword arguments tune chose, with everything else in the
file as it was: its layout, its comments, a trailing comma (libcst edits the concrete syntax tree,
where a regular expression would break a call over several lines). A value the program computes
(`num_workers=args.workers`) or passes through `**kwargs` is not overwritten: it is returned as a
line for the user to change by hand."""

import warnings
from typing import NamedTuple

import libcst as cst

with warnings.catch_warnings():     # libcst.metadata's type-inference module warns on newer mypy_extensions
    warnings.simplefilter("ignore", DeprecationWarning)
    from libcst.metadata import MetadataWrapper, PositionProvider

#: DataLoader's parameters that may be passed by position, in order.
POSITIONAL = ("dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "num_workers", "collate_fn",
              "pin_memory", "drop_last", "timeout", "worker_init_fn", "multiprocessing_context", "generator")
REMOVE = "remove"           # the value that takes a keyword out of the call


class EditError(ValueError):
    """The file cannot be edited here (no DataLoader call at the line, a syntax error)."""


class LoaderEdit(NamedTuple):
    source: str             # the file's new text
    written: dict           # the keys set in the call
    by_hand: list           # what to change by hand, one line each


def edit_loader_call(source: str, line: int, settings: dict) -> LoaderEdit:
    try:
        wrapper = MetadataWrapper(cst.parse_module(source))
    except cst.ParserSyntaxError as exc:
        raise EditError(f"cannot parse it ({str(exc).splitlines()[0]})")
    finder = _CallAt(line)
    wrapper.visit(finder)
    if finder.found is None:
        raise EditError(f"no DataLoader(...) call spans line {line}")
    new_call, written, by_hand = _edited(finder.found, settings)
    module = wrapper.module.visit(_Replace(finder.found, new_call))
    return LoaderEdit(module.code, written, by_hand)


class _CallAt(cst.CSTVisitor):
    """The innermost call spanning the line whose callee is a DataLoader (or a subclass's
    `super().__init__(...)`, where the user's line passes the arguments on)."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int):
        self.line = line
        self.found, self.span = None, None

    def visit_Call(self, node: cst.Call) -> None:
        where = self.get_metadata(PositionProvider, node)
        if not where.start.line <= self.line <= where.end.line or not _is_loader(node.func):
            return
        span = where.end.line - where.start.line
        if self.found is None or span <= self.span:
            self.found, self.span = node, span


def _is_loader(func) -> bool:
    name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
    return isinstance(name, str) and ("DataLoader" in name or name == "__init__")


class _Replace(cst.CSTTransformer):
    def __init__(self, old, new):
        self.old, self.new = old, new

    def leave_Call(self, original_node, updated_node):
        return self.new if original_node is self.old else updated_node


def literal(value) -> cst.BaseExpression:
    if isinstance(value, bool) or value is None:
        return cst.Name(str(value))
    return cst.Integer(str(int(value)))


def _is_literal(node) -> bool:
    return isinstance(node, cst.Integer) or (isinstance(node, cst.Name) and node.value in ("True", "False", "None"))


def _edited(call: cst.Call, settings: dict):
    args = list(call.args)
    positional = [a for a in args if a.keyword is None and not a.star]
    spread = any(a.star for a in args)
    written, by_hand, appended = {}, [], []
    for key, value in settings.items():
        at = next((i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == key), None)
        if at is None and key in POSITIONAL and POSITIONAL.index(key) < len(positional):
            at = args.index(positional[POSITIONAL.index(key)])
        if at is not None:
            if value == REMOVE and args[at].keyword is not None:
                args, written[key] = _without(args, at), value
            elif value == REMOVE:
                by_hand.append(f"{key}: passed by position here; pass None for it")
            elif _is_literal(args[at].value):
                args[at] = args[at].with_changes(value=literal(value))
                written[key] = value
            else:
                code = cst.Module([]).code_for_node(args[at].value)
                by_hand.append(f"{key}={_shown(value)}: the call passes {key}={code}; set that to {_shown(value)}")
        elif value == REMOVE:
            continue
        elif spread:
            by_hand.append(f"{key}={_shown(value)}: the call passes **kwargs, which may hold {key}; set it there")
        else:
            appended.append(cst.Arg(keyword=cst.Name(key), value=literal(value),
                                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
            written[key] = value
    return call.with_changes(args=_appended(call, args, appended)), written, by_hand


def _shown(value) -> str:
    return str(value)


def _without(args: list, at: int) -> list:
    """The arguments less one; a removed last argument hands its comma and closing layout back."""
    if at == len(args) - 1 and at > 0:
        gone = args[at]
        args = args[:at - 1] + [args[at - 1].with_changes(comma=gone.comma, whitespace_after_arg=gone.whitespace_after_arg)]
        return args
    return args[:at] + args[at + 1:]


def _appended(call: cst.Call, args: list, new: list) -> list:
    """`args` followed by `new`, laid out as the call already is: one a line (with the same indent and
    any trailing comma) in a call over several lines, else `, ` between them on one line."""
    for arg in new:
        if not args:
            args = [arg]
            continue
        last = args[-1]
        before_last = args[-2].comma.whitespace_after if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) \
            else call.whitespace_before_args
        closing = last.comma.whitespace_after if isinstance(last.comma, cst.Comma) else last.whitespace_after_arg
        if isinstance(closing, cst.ParenthesizedWhitespace):
            indent = before_last.last_line if isinstance(before_last, cst.ParenthesizedWhitespace) \
                else cst.SimpleWhitespace(closing.last_line.value + "    ")
            between = closing.with_changes(last_line=indent)
            fresh = cst.ParenthesizedWhitespace(indent=closing.indent, last_line=closing.last_line)
            if isinstance(last.comma, cst.Comma):
                args[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=between))
                arg = arg.with_changes(comma=cst.Comma(whitespace_after=fresh))
            else:
                args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=between),
                                             whitespace_after_arg=cst.SimpleWhitespace(""))
                arg = arg.with_changes(whitespace_after_arg=fresh)
        else:
            trailing = last.comma if isinstance(last.comma, cst.Comma) else cst.MaybeSentinel.DEFAULT
            between = cst.ParenthesizedWhitespace(indent=before_last.indent, last_line=before_last.last_line) \
                if isinstance(before_last, cst.ParenthesizedWhitespace) else cst.SimpleWhitespace(" ")
            args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=between),
                                         whitespace_after_arg=cst.SimpleWhitespace(""))
            arg = arg.with_changes(comma=trailing, whitespace_after_arg=last.whitespace_after_arg)
        args = args + [arg]
    return args
