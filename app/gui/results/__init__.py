"""The results table and the log lines a finished job writes.

`table` is the sortable model and view, `cells` what each column shows for a job,
`load_cells` a load job's headline row, `result_log` the lines a result adds to the log.
"""
