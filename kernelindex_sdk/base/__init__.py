"""The base helpers every layer may use: problems and printable lines, JSON pointers,
files written whole, progress, the wire facts of the format, metric names, workers.

Nothing here imports another layer of the SDK."""
