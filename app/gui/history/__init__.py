"""Stored runs: the History panel, two runs compared, one job followed across runs.

`panel` lists, opens, deletes and imports runs; `compare_dialog` puts two runs side by
side; `trend_view` plots one job's median across every stored run.
"""
