"""The line that keeps a change `gpuprof try` measured, worded when the try runs so that its saved
record shows the advice it was measured with, whatever later versions of the fixes say."""

from gpuprof.advise import fixes
from gpuprof.advise.loader_terms import keep_loader_line
from gpuprof.record.changes import loader_settings


def keep_line(settings: dict, fix_id, loader, framework=None) -> str:
    """How the user keeps `settings`: DataLoader settings at the loader's line, else what the fix
    `fix_id` declares; in the terms of the framework that built the loader. "" when neither says."""
    settings = settings or {}
    if loader_settings(settings):
        return keep_loader_line(settings, loader, framework)
    fix = fixes.get(fix_id)
    if fix is not None and fix.keep is not None:
        return fix.keep(settings, loader, framework)
    return ""
