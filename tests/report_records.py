"""Records for the report's tests: the before/after builders' runs with hostile text
(HTML, quotes, ``javascript:`` URLs) in every field a record leaves open, digests
recomputed so the records stay valid."""

from __future__ import annotations

from typing import Any

from beforeafter_records import RunSpec, records_for

from kernelindex_sdk.canonical import digest

#: What a hostile field starts with: a page holding it unescaped runs a script.
HOSTILE = "<script>alert(1)</script>\"'&"
#: URLs that must never become links.
BAD_URLS = ("javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,<script>x</script>")


def hostile_records(
    text: str, spec: RunSpec | None = None, *, url: str = BAD_URLS[0], kernel: str | None = None
) -> list[dict[str, Any]]:
    """The five records of one run, ``text`` (made hostile) in their open fields:
    titles, labels, parameter values, settings, software versions, GPU product, harness
    name, a reason, and ``url`` as both repository URIs. ``kernel``: a kernel name to
    use instead of the spec's (not a slug: for what the schema would refuse)."""
    value = HOSTILE + text
    protocol, workload, environment, implementation, run = records_for(spec or RunSpec())
    for item in (protocol, workload, environment, implementation, run):
        item["metadata"]["title"] = value
        item["metadata"]["labels"] = {"note": value}
    workload["spec"]["parameters"]["shape"] = value
    workload["spec"]["settings"] = {"mode": value}
    if kernel is not None:
        workload["spec"]["kernel"] = kernel
    environment["spec"]["hardware"]["product"] = value
    environment["spec"]["software"] = {"torch": value}
    implementation["spec"]["source"] = {"repository": url, "revision": value}
    protocol["spec"]["harness"] = {"name": value, "repository": url}
    protocol["spec"]["provenance"] = {"/harness/name": {"origin": "caller", "detail": value}}
    run_spec = run["spec"]
    if run_spec["status"] != "passed":
        run_spec["reason"] = value
    for field, member in (
        ("protocolDigest", protocol),
        ("workloadDigest", workload),
        ("environmentDigest", environment),
        ("implementationDigest", implementation),
    ):
        run_spec[field] = digest(member)
    return [protocol, workload, environment, implementation, run]
