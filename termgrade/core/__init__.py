"""Core helpers every floor may use, and that use no floor: errors (each with its fix),
settings (every environment variable TermGrade reads), atomic writes, JSONL journals,
retries, progress bars, text helpers, lazy imports, figures, the package's data and version.

Nothing here knows what a task, a trial or a dataset is (docs/architecture.md)."""
