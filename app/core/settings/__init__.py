"""What a user asks for, as plain data with its limits: `profile` (Profile, JobSpec, the
resolved job), `links` (a job's link: the presets, custom links), `load` (a job's load
fields). The checks of what is read back take their bounds from here."""
