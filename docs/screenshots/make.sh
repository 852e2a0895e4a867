#!/bin/sh
# Regenerate the screenshots (README.md, docs/window.md) from the real window: a run of the quick preset
# at 1024x700, light and dark. Settings and results go to a temporary folder (the
# user's history and theme are untouched). Needs a display: uses $DISPLAY if set,
# else Qt's offscreen platform. Run from the repository root:  sh docs/screenshots/make.sh
set -eu
python=${PYTHON:-.venv/bin/python}
[ -n "${DISPLAY:-}" ] || export QT_QPA_PLATFORM=offscreen
out=docs/screenshots
"$python" -m app gui --profile quick --run --tab comparison --theme light --size 1024x700 \
    --screenshot "$out/main-light.png"
"$python" -m app gui --profile quick --run --tab scaling --theme dark --size 1024x700 \
    --screenshot "$out/main-dark.png"
# A real load run of three key exchanges (docs/screenshots/load.json, ~30 s), Load tab.
"$python" -m app gui --profile docs/screenshots/load.json --run --tab load --theme light --size 1024x700 \
    --screenshot "$out/load-light.png"
# The trend view over the tests' hand-built history (not measurements: see trend.py).
"$python" docs/screenshots/trend.py "$out/trend-light.png" light
