"""Acceptance tests of the ``kernelindex`` CLI, driven by tests/examples."""
