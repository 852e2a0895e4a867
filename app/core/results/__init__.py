"""What a run produced: `model` is the result model and its JSON/CSV contract
(`JobResult`, `RunResult`, `load_results_file`); `check` and its parts validate results
read back from a file or the store, field by field, with bounds from the settings;
`plausible` relates fields to each other and the clock.
"""
