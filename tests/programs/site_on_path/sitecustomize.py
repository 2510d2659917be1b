"""A sitecustomize on PYTHONPATH, as clusters set one up: plain python runs it once at start-up."""
import builtins

builtins.SITE_RUNS = getattr(builtins, "SITE_RUNS", 0) + 1
WHERE = "on PYTHONPATH"
