"""The schema registry: the shipped JSON Schemas by ``$id``, their dialects and version
status, inlined and bundled forms, exported schema files, and the fingerprint of the
checks a store trusts.

Imports the layers below: base, reading, canonical."""
