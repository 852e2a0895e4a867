"""The configuration panel: schemes, their parameters and every job setting of a profile.

`panel` is the panel itself (the scheme tree and the settings below it), `panel_checks`
its check and `problem_words` the check's words; `variants` what Add variant adds;
`job_settings`, `link_editor`, `load_editor` and `param_editor` edit the selected jobs;
`profile_jobs` turns a row into a profile job and back; `profile_problems` lists why a
profile cannot be opened; `presets` describes the built-in profiles for the menu.
"""
