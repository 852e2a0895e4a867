"""Every scheme module of the registry, imported: what each job's process forks with.

The fork server imports this module before it forks any job (it is in `CHILD_PRELOAD`,
app/core/processes/jobstart.py, which names it rather than importing it: that group
stands below the schemes), so a job process starts with every module of
`registry.MODULES` loaded, and the crypto libraries with them. A new scheme module is
listed once, in `registry.MODULES`.
"""

from __future__ import annotations

import importlib

from app.core.schemes.registry import MODULES

for _name in MODULES:
    importlib.import_module(_name)
