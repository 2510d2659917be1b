"""`file:line` names of places in the user's code, as the probes record them."""


def same_line(where, target) -> bool:
    """`target` names the place `where` with more or less of its path (`train.py:30` and
    `src/train.py:30` are one line; `train.py:30` and `other/train.py:31` are not)."""
    if not where or not target:
        return False
    return where == target or where.endswith("/" + target) or target.endswith("/" + where)
