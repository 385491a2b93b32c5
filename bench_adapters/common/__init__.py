"""What every importer shares: the import path map → check → write, and its parts.

An importer only maps its source (``bench_adapters/<source>/``); checking with
``validate --strict-refs``'s own checks (:mod:`.checking`), collecting and refusing
entries one line each (:mod:`.importing`), the atomic batched write under the
folder's lock (:mod:`.writer`), the GPU catalog (:mod:`.gpus`), naming (:mod:`.names`),
the run envelope (:mod:`.records`) and provenance with ``--set`` declarations
(:mod:`.provenance`) are here, once, so the integrity rules cannot drift apart between
sources. See ``docs/importers/README.md``.
"""
