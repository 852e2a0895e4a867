"""What the figures say: statistics of one metric, and runs set side by side.

`stats` summarises samples (median, interval, outliers) and holds the stability
warnings; `compare` matches two runs' jobs and gives each metric a ratio, interval and
verdict; `trend` follows one job across every stored run; `run_wide` finds the warnings
a whole run shares, to be said once.
"""
