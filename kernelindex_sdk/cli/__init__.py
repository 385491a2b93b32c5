"""The ``kernelindex`` command line: options parsed into plain objects, reporters by name."""
