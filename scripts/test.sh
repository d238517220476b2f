#!/usr/bin/env bash
# Second command of the README: the whole test suite (set-up included, so it works on a fresh clone).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -m "not slow"` for the fast part.
set -euo pipefail
source "$(dirname "$0")/env.sh"
bash "$ROOT/scripts/setup.sh" >/dev/null
source "$(dirname "$0")/env.sh"
cd "$ROOT"
# The tests' JVMs start from a class-data archive of Spark's classes (tests/jvm.py), made once per clone in about 40 s:
# begun here, beside the steps before the first test (the tests wait for it; a failure leaves it to them).
("$VENV/bin/python" -c "from tests.jvm import jvm_options; jvm_options()" >/dev/null 2>&1 &)
# The UI tests drive Debian's Chromium through Playwright (no browser download): install it once.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test: installing Debian's chromium for the browser tests (once)"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; } >/dev/null 2>&1 \
      || echo "test: could not install chromium; the browser tests will fail in CI and be skipped elsewhere" >&2
  else
    echo "test: chromium is not installed (apt-get install chromium as root); browser tests will be skipped" >&2
  fi
fi
# The page's logic tests and the bundle check run node on the UI's sources (plugins/ui): install its
# pinned packages once (package-lock.json; node_modules is not committed).
UI_DIR="$ROOT/airflow_lineage_provider/plugins/ui"
if [ ! -d "$UI_DIR/node_modules" ] && command -v npm >/dev/null 2>&1; then
  echo "test: npm ci in plugins/ui for the page's logic tests (once)"
  (cd "$UI_DIR" && npm ci --no-audit --no-fund >/dev/null 2>&1) \
    || echo "test: npm ci failed in $UI_DIR; the page's node tests will be skipped" >&2
fi
# The project's own modules (an editable install) and the tests are compiled once and kept in __pycache__ (ignored by
# git), not again in each of the suite's processes, even where PYTHONDONTWRITEBYTECODE is set.
unset PYTHONDONTWRITEBYTECODE
# The linter first (pyproject.toml [tool.ruff]): a style error fails the run before any test starts.
"$VENV/bin/ruff" check --quiet "$ROOT"
# One worker more than the machine's cores: the tests also wait (servers starting, schedulers' loops, expiries) and a
# third worker on two cores fills those waits (docs/testing.md; tests/workers.py: which tests go together).
# `-n 0` runs in one process.
workers="${AIRFLOW_LINEAGE_TEST_WORKERS:-$(( $(nproc 2>/dev/null || echo 2) + 1 ))}"
exec "$VENV/bin/python" -m pytest -p no:cacheprovider -n "$workers" "$@"
