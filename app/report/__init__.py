"""Reports and exports: one exporter interface (JSON, CSV, Markdown, PDF) for GUI and CLI."""
