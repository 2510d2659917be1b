"""A line of a code snippet made to fit the report's width without changing what it does when
pasted: a trailing comment goes on lines of its own above the code, statements joined by `;` go
on lines of their own, and a call or a literal is broken after a comma inside its brackets (or
after its opening bracket), where Python carries on to the next line. A line with none of these
places stays whole, past the edge."""

import textwrap


def fit_code(line: str, width: int) -> list:
    """`line` as lines of at most `width` characters where it can be, keeping its meaning."""
    if len(line) <= width:
        return [line]
    indent = line[:len(line) - len(line.lstrip())]
    code, comment = _split_comment(line)
    if comment and code.strip():
        words = textwrap.wrap(comment, max(width - len(indent) - 2, 20))
        return [f"{indent}# {part}" for part in words] + fit_code(code.rstrip(), width)
    statements = _statements(line)
    if len(statements) > 1:
        return [piece for statement in statements for piece in fit_code(indent + statement, width)]
    return _break_after_commas(line, width)


def _scan(line: str, carried: int = 0):
    """(index, character, open brackets' indices) of each character outside string literals;
    `carried` brackets opened on earlier lines count as open (their index None)."""
    opened: list = [None] * carried
    quote = None
    for at, char in enumerate(line):
        if quote:
            if char == quote and line[at - 1] != "\\":
                quote = None
            continue
        if char in "'\"":
            quote = char
            continue
        if char in "([{":
            opened.append(at)
        elif char in ")]}" and opened:
            opened.pop()
        yield at, char, opened


def _split_comment(line: str):
    """(code, comment text) for a line with a `#` comment after its code, else (line, None)."""
    for at, char, _ in _scan(line):
        if char == "#":
            return line[:at], line[at + 1:].strip()
    return line, None


def _statements(line: str) -> list:
    """The statements of a line joined by `; ` outside brackets, or [line] for one (or for a
    compound statement's header, `for ...: a; b`, whose body must stay on its line)."""
    cuts = []
    for at, char, opened in _scan(line):
        if opened:
            continue
        if char == ":":
            return [line]
        if char == ";":
            cuts.append(at)
    if not cuts:
        return [line]
    bounds = [-1] + cuts + [len(line)]
    return [line[a + 1:b].strip() for a, b in zip(bounds, bounds[1:]) if line[a + 1:b].strip()]


def _break_after_commas(line: str, width: int) -> list:
    """Broken inside brackets, as long as that shortens it: after the last comma within `width`,
    or where there is none, after the last opening bracket. The rest is aligned under the bracket's
    first character, or for a bracket past half the width (or on an earlier line) indented 8 more
    than the line: inside brackets any indent is valid."""
    pieces, carried, hanging = [], 0, len(line) - len(line.lstrip()) + 8
    while len(line) > width:
        comma = bracket = None
        for at, char, opened in _scan(line[:width], carried):
            if char == "," and opened:
                column = opened[-1] + 1 if opened[-1] is not None and opened[-1] + 1 <= width // 2 else hanging
                comma = (at + 1, column, len(opened))
            elif char in "([{" and opened and opened[-1] == at:
                bracket = (at + 1, hanging, len(opened))
        cut = comma or bracket
        if cut is None:
            break
        rest = " " * cut[1] + line[cut[0]:].lstrip()
        if len(rest) >= len(line):
            break
        pieces.append(line[:cut[0]].rstrip())
        line, carried = rest, cut[2]
    return pieces + [line]
