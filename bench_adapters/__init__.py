"""Adapters that turn other tools' benchmark output into kernelindex records, through the SDK's public API."""
