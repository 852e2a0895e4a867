"""What the figures say across runs: `compare` matches two runs' jobs and gives each
metric a ratio, interval and verdict (`median_ratio`, `order_statistics`, `evidence`);
`trend` follows one job across every stored run; `run_wide` and `warning_groups` say a
run's warnings once.
"""
