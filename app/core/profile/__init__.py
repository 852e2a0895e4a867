"""Profiles: what a user asks to measure, as versioned JSON.

`model` holds the pydantic models, their limits and `ProfileError`; `files` reads,
migrates and saves profile files and finds the presets; `resolve` checks a profile's
jobs against the registry and this machine and resolves them; `edits` changes a profile
for the command line (samples, link, placement, `--reduced`); `sizes` reads and writes
message sizes.
"""
