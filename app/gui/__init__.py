"""The desktop window (PySide6 + pyqtgraph): a face over the same runner as the command line.

`app` starts it, `main_window` holds it together; `config/` is the configuration panel,
`plots/` the live plots, `results/` the results table, `history/` the stored runs
(docs/ARCHITECTURE.md, "The window: app/gui/").
"""
