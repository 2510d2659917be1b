"""The report's declared types (gpuprof/record/report_format.py) say what docs/report-format.md says
and what the builder writes: a field the renderers read is declared, documented and built."""

import json
import os
import re
import typing

import pytest

from gpuprof.record import report_format
from tests.golden.outputs import EXPECTED

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "report-format.md")


def declared(kind) -> set:
    return set(typing.get_type_hints(kind))


def documented_top_level() -> set:
    """The first table's fields, each `## \\`name\\`` section's names, and the top-level objects the
    verdict's section names with a dot (`frameworks.data_parallel`)."""
    text = open(DOC, encoding="utf-8").read()
    first_table, rest = text.split("\n## ", 1)
    names = set()
    for cell in re.findall(r"^\| (`[^|]+`) \|", first_table, re.M):
        names.update(re.findall(r"`([a-z0-9_]+)`", cell))
    for heading in re.findall(r"^## (.+)$", text, re.M):
        names.update(n for n in re.findall(r"`([a-z0-9_]+)`", heading) if not n.startswith("gpuprof"))
    verdict_section = rest.split("## `verdict`", 1)[1].split("\n## ", 1)[0]
    names.update(re.findall(r"^\| `([a-z0-9_]+)\.", verdict_section, re.M))
    return names


def golden_reports() -> list:
    return [json.load(open(os.path.join(EXPECTED, name, "report.json"))) for name in sorted(os.listdir(EXPECTED))
            if os.path.isfile(os.path.join(EXPECTED, name, "report.json"))]


def test_every_documented_section_is_declared_and_every_declared_one_documented():
    documented = documented_top_level() - {"report"}
    assert documented - declared(report_format.Report) == set()
    assert declared(report_format.Report) - documented == set()


@pytest.mark.parametrize("field, kind", [("verdict", report_format.Verdict), ("steps", report_format.Steps),
                                         ("system", report_format.System), ("copies", report_format.Copies),
                                         ("memory", report_format.Memory), ("job", report_format.DistributedJob)])
def test_the_golden_reports_hold_only_declared_fields(field, kind):
    reports = golden_reports()
    assert reports
    assert {key for report in reports for key in report} - declared(report_format.Report) == set()
    built = {key for report in reports for key in (report.get(field) or {})}
    assert built - declared(kind) == set()


def test_each_fix_and_finding_holds_only_declared_fields():
    reports = golden_reports()
    assert {key for report in reports for fix in report["advice"] for key in fix} - declared(report_format.Fix) == set()
    assert {key for report in reports for finding in report["findings"] for key in finding} \
        - declared(report_format.Verdict) == set()
