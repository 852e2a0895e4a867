"""`cryptobench presets`: the built-in profiles, each with its number of measured jobs."""

from __future__ import annotations

import argparse

from app.cli.common import EXIT_OK
from app.cli.common import console as _console

NAME = "presets"
HELP = "list the built-in profiles"
GUIDES = ("docs/experiments.md",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    from app.cli.terminal.lists import print_preset_list
    from app.cli.terminal.printing import count_phrase
    from app.core.profile.files import load_profile, preset_names
    from app.core.profile.resolve import resolve_jobs
    from app.core.settings.profile import ProfileError

    # The unit `run` reports: measured jobs (a profile job runs once per message size). Any
    # memory: the list describes the presets, not whether this machine can run them now.
    rows = []
    for name in preset_names():
        try:
            profile = load_profile(name)
            measured = sum(len(job.message_sizes) for job in resolve_jobs(profile, name, 1 << 62, has_remote=True))
            sweeps = any(job.links for job in profile.jobs)
            rows.append((name, count_phrase(measured, len(profile.jobs), links=sweeps), profile.description))
        except ProfileError as exc:
            rows.append((name, "invalid", str(exc)))
    print_preset_list(_console(), rows)
    return EXIT_OK
