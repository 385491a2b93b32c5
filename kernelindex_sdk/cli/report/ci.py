"""The formats CI systems read: GitHub Actions annotations and JUnit XML.

Every command that offers them (``validate``, ``schema diff``, ``compare --against``)
writes them here, so one rule covers them all: whatever a record or a schema holds,
one annotation is one line (:func:`~kernelindex_sdk.base.escaping.github_data`,
:func:`~kernelindex_sdk.base.escaping.github_property`) and the XML is well-formed
(:func:`~kernelindex_sdk.base.escaping.xml_text`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import IO, NamedTuple

from kernelindex_sdk.base.escaping import github_data, github_property, xml_text


def annotation(
    level: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    column: int | None = None,
    title: str | None = None,
) -> str:
    """``::LEVEL file=F,line=L,col=C,title=T::MESSAGE``, a GitHub Actions workflow
    command (``error``, ``warning``, ``notice``) that puts ``message`` on the file and
    line in a pull request's diff; the column only with a line. Properties and the
    message are encoded as GitHub reads them, and the whole is one line."""
    fields = []
    if file is not None:
        fields.append(f"file={github_property(file)}")
    if line is not None:
        fields.append(f"line={line}")
        if column is not None:
            fields.append(f"col={column}")
    if title is not None:
        fields.append(f"title={github_property(title)}")
    properties = f" {','.join(fields)}" if fields else ""
    return f"::{level}{properties}::{github_data(message)}"


class JunitCase(NamedTuple):
    """One test case of a JUnit report, and what became of it."""

    classname: str
    name: str
    #: ``failure``, ``error``, or None for a case that passed.
    outcome: str | None = None
    #: The failure's type (a problem code, a rule ID).
    type: str = ""
    #: One printable line each; the first is the failure's message.
    lines: tuple[str, ...] = ()


def write_junit(
    out: IO[str],
    suite: str,
    cases: Sequence[JunitCase],
    properties: Mapping[str, str] | None = None,
) -> None:
    """JUnit XML, one test suite of ``cases``, what CI systems show as tests (with the
    suite's ``properties``, what it assumed, if any). Every name, value, type, message
    and line is escaped first (:func:`~kernelindex_sdk.base.escaping.xml_text`: one
    printable line, no character XML 1.0 forbids), so the XML is always well-formed."""
    import xml.etree.ElementTree as ET

    failures = sum(1 for case in cases if case.outcome == "failure")
    errors = sum(1 for case in cases if case.outcome == "error")
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": str(errors)}
    suites = ET.Element("testsuites", {"name": suite, **counts})
    element = ET.SubElement(suites, "testsuite", {"name": suite, **counts, "skipped": "0"})
    if properties:
        held = ET.SubElement(element, "properties")
        for name, value in properties.items():
            ET.SubElement(held, "property", {"name": xml_text(name), "value": xml_text(value)})
    for case in cases:
        test = ET.SubElement(
            element,
            "testcase",
            {"classname": xml_text(case.classname), "name": xml_text(case.name)},
        )
        if case.outcome is not None:
            lines = [xml_text(line) for line in case.lines]
            shown = {"message": lines[0] if lines else "", "type": xml_text(case.type)}
            found = ET.SubElement(test, case.outcome, shown)
            found.text = "\n".join(lines)
    ET.indent(suites)
    out.write('<?xml version="1.0" encoding="utf-8"?>\n')
    out.write(ET.tostring(suites, encoding="unicode"))
    out.write("\n")
