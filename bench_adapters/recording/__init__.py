"""Recording any kernel on this machine: the environment probe, the do_bench recorder,
the ``kernel_bench`` pytest fixture and ``kernelindex env``.

Every module here imports torch, triton and pynvml only inside the functions that need
them, so importing the package (``kernelindex --help``, the CPU tests) never does.
"""
