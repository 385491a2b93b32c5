"""``kernelindex bench liger``: run Liger-Kernel's Triton kernels on CUDA and record the runs.

Where the Liger importer (:mod:`bench_adapters.liger`) turns Liger's published CSV into
records, this adapter makes such measurements itself, with the provenance the CSV
lacks: the device and software versions, the exact timing settings, and a correctness
check of every kernel against its reference before it is timed.

Modules, lowest first: ``catalog`` (which kernels, providers, sweeps; data in
``data/kernels.json``), ``plan`` (workloads, no GPU), ``probes`` (device, timer,
memory probe protocols and their CUDA implementations), ``gate`` (the correctness
rule), ``setups`` and ``references`` (per-kernel inputs; plain-PyTorch references),
``torch_backend`` (passes and tensor comparison), ``runner`` (the sweep loop: each
run measured through the recorder's :func:`bench_adapters.recording.measure.measure`),
``assemble`` (records, through the importer's builders), ``bench`` (the whole job).
torch, triton and liger-kernel are imported only when a sweep runs.
"""
