"""A sitecustomize that fails: `site` reports it on stderr and keeps no module of that name."""
import builtins

builtins.SITE_RUNS = getattr(builtins, "SITE_RUNS", 0) + 1
raise RuntimeError("broken site set-up")
