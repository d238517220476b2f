#!/usr/bin/env bash
# Second command of the README: the whole test suite (set-up included, so it works on a fresh clone).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -m "not slow"` for the fast part.
set -euo pipefail
source "$(dirname "$0")/env.sh"
bash "$ROOT/scripts/setup.sh" >/dev/null
source "$(dirname "$0")/env.sh"
cd "$ROOT"
exec "$VENV/bin/python" -m pytest -p no:cacheprovider "$@"
