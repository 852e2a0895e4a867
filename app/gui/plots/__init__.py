"""The plots panel, one module per tab (see panel.py)."""
