"""What a program sees of sitecustomize: the one that ran at start-up, how many times one ran, and
what a later `import sitecustomize` gives. Plain python is the oracle for every line."""
import builtins
import sys


def where(module):
    return None if module is None else getattr(module, "WHERE", "another sitecustomize")


print("at start:", where(sys.modules.get("sitecustomize")))
print("runs at start:", getattr(builtins, "SITE_RUNS", 0))
try:
    import sitecustomize
    print("later import:", where(sitecustomize))
except Exception as exc:
    print("later import:", type(exc).__name__, exc)
print("runs in all:", getattr(builtins, "SITE_RUNS", 0))
