"""The schemes: one module per family group, each exposing SPECS; `base` is the interface
every scheme implements and `registry` finds them by id (docs/ARCHITECTURE.md, "How to add
a scheme, a command or a report section")."""
