def render(fmt, report, record=None, terminal=False, width=None, tried=None):
    if fmt == "json":
        from gpuprof.render.json_report import json_text
        return json_text(report)
    if fmt == "markdown":
        from gpuprof.render.markdown import render_markdown
        return render_markdown(report)
    if fmt == "console":
        from gpuprof.render.console import console_text
        return console_text(report, terminal=terminal, width=width)
    if fmt == "trace":
        from gpuprof.render.trace import trace_text
        return trace_text(record, report)
    from gpuprof.render.html import render_html
    return render_html(record, report, tried=tried)
