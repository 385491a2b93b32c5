"""The example record sets of ``compare`` are exactly what their generator writes.

``tests/examples/compare/make_examples.py`` computes every digest; this test
regenerates the sets in memory and compares them with the stored files, so a
hand edit of a record (which would break its digests) cannot slip in.
"""

from __future__ import annotations

from pathlib import Path

from compare_corpus import EXAMPLES, generator

from kernelindex_sdk.validating.pipeline import Pipeline


def test_stored_examples_match_the_generator() -> None:
    expected = generator().examples()
    stored = {
        str(path.relative_to(EXAMPLES)): path.read_text(encoding="utf-8")
        for path in EXAMPLES.rglob("*")
        if path.is_file() and path.suffix in (".json", ".jsonl")
    }
    assert sorted(stored) == sorted(expected)
    for name, content in expected.items():
        assert stored[name] == content, f"{name} is stale: rerun make_examples.py"


def test_every_example_is_valid_but_the_invalid_one() -> None:
    pipeline = Pipeline([str(EXAMPLES)], strict_refs=True)
    invalid = []
    for item in pipeline:
        assert not item.unreadable, item.problems
        if not item.valid:
            invalid.append(Path(item.source).relative_to(EXAMPLES).as_posix())
    problems = pipeline.late
    assert invalid == ["invalid/bad.json"]
    # bad.json references records that only its directory's good.json partly holds.
    assert {p.source for p in problems} <= {str(EXAMPLES / "invalid" / "bad.json")}
