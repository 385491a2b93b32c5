"""Strict reading: the JSON intake (every rule of strict JSON, line and column of each
problem), JSON Lines and the tail memo, where documents come from (files, folders,
standard input, stores).

Imports only :mod:`kernelindex_sdk.base` and :mod:`kernelindex_sdk.errors`."""
