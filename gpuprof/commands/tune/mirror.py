"""A folder in which the patched program runs without touching the user's files (`tune --check`
without --apply): the folder that holds the program, laid out again in a temporary folder where the
patched files are copies with the patch, the script is a copy (Python puts a script's real folder on
sys.path, so a link would import the originals beside it), and everything else is a link to the
original. Only the folders on the way to a copied file are made; `__pycache__` is left out, so
Python never writes the patched bytecode beside the user's sources."""

import os
import shutil
import tempfile


class Mirror:
    def __init__(self, root: str, contents: dict):
        """`contents`: absolute path -> text (None: copied as it is), every one under `root`."""
        self.root = os.path.realpath(root)
        self.contents = {os.path.realpath(p): text for p, text in contents.items()}
        self.folder = None

    def __enter__(self):
        self.folder = tempfile.mkdtemp(prefix="gpuprof-tune-check-")
        self._lay(self.root, self.folder)
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.folder, ignore_errors=True)

    def path(self, original: str) -> str:
        """Where `original` lies in the mirror (itself when it is outside the mirrored folder)."""
        real = os.path.realpath(original)
        if real != self.root and not real.startswith(self.root + os.sep):
            return original
        return os.path.join(self.folder, os.path.relpath(real, self.root))

    def _lay(self, source: str, target: str) -> None:
        for name in os.listdir(source):
            if name == "__pycache__":
                continue
            here, there = os.path.join(source, name), os.path.join(target, name)
            if here in self.contents:
                self._write(here, there)
            elif os.path.isdir(here) and not os.path.islink(here) and any(
                    p.startswith(here + os.sep) for p in self.contents):
                os.mkdir(there)
                self._lay(here, there)
            else:
                os.symlink(here, there)

    def _write(self, original: str, there: str) -> None:
        text = self.contents[original]
        if text is None:
            shutil.copy2(original, there)
            return
        with open(there, "w", encoding="utf-8") as handle:
            handle.write(text)
        shutil.copymode(original, there)
