"""Validating: the schema engines (the reference and the fast one), the validation
session and its quick pass, digests of records, the document pipeline (in process, in
workers, on a Dask cluster), and the record functions the package's facade exports.

Imports the layers below: base, reading, canonical, schema, models, checks."""
