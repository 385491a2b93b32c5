"""Adapters that turn other tools' benchmark output into kernelindex records.

They use only the SDK's public API; the SDK never imports them (the CLI finds their
commands through the ``kernelindex.commands`` entry-point group).
"""
