"""Write files so that a reader never sees half of one and two runs never share one."""

import json
import os


def write_text_atomic(path: str, text: str) -> None:
    """Write to a unique temporary name beside `path`, then rename over it."""
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_json_atomic(path: str, data) -> None:
    write_text_atomic(path, json.dumps(data, indent=1, sort_keys=False, default=_jsonable) + "\n")


def _jsonable(value):
    if isinstance(value, float) and value != value:
        return None
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, tuple)):
        return list(value)
    return str(value)
