#!/usr/bin/env bash
# raterstats developer entry point: sets up its own virtual environment, then runs a task.
#
#   bash run.sh demo [--out DIR]   analyse the built-in clinical-QA study, write a report
#   bash run.sh test [PYTEST ARGS] run the test suite (slow sampling tests: -m slow)
#   bash run.sh lint               ruff + mypy
#   bash run.sh docs               build the documentation into site/ (warnings are errors)
#
# Needs only Python 3.12+ with pip/venv. Set PYTHON=/path/to/python3.x to choose the
# interpreter; otherwise the newest python3.1x >= 3.12 on PATH (or under pyenv) is used.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
venv="${RATERSTATS_VENV:-$here/.venv}"

find_python() {
  local candidates=()
  [[ -n "${PYTHON:-}" ]] && candidates+=("$PYTHON")
  candidates+=(python3.14 python3.13 python3.12 python3 python)
  if command -v pyenv >/dev/null 2>&1; then
    local root; root="$(pyenv root)"
    for p in "$root"/versions/3.1[2-9]*/bin/python3; do [[ -x "$p" ]] && candidates+=("$p"); done
  fi
  for c in "${candidates[@]}"; do
    if "$c" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; then
      command -v "$c" 2>/dev/null || echo "$c"
      return 0
    fi
  done
  return 1
}

setup() {
  local stamp="$venv/.raterstats-stamp" want
  want="$(cat pyproject.toml | sha256sum | cut -d' ' -f1)"
  if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    return 0
  fi
  local py
  if ! py="$(find_python)"; then
    echo "run.sh: raterstats needs Python 3.12 or newer; none found (set PYTHON=/path/to/python3.12)" >&2
    exit 2
  fi
  if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)'; then
    echo "run.sh: creating virtual environment $venv with $("$py" --version)" >&2
    rm -rf "$venv"
    "$py" -m venv "$venv"
  fi
  echo "run.sh: installing raterstats and its test dependencies into $venv" >&2
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -e ".[test]"
  echo "$want" >"$stamp"
}

task="${1:-help}"
shift || true
case "$task" in
  demo)
    setup
    exec "$venv/bin/raterstats" demo "$@"
    ;;
  test)
    setup
    exec "$venv/bin/python" -m pytest "$@"
    ;;
  lint)
    setup
    "$venv/bin/ruff" check .
    exec "$venv/bin/mypy"
    ;;
  docs)
    setup
    echo "run.sh: installing the documentation tools (.[docs]) into $venv" >&2
    "$venv/bin/python" -m pip install --quiet -e ".[docs]"
    NO_MKDOCS_2_WARNING=1 exec "$venv/bin/python" -m mkdocs build --strict --site-dir site "$@"
    ;;
  setup)
    setup
    ;;
  *)
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
    [[ "$task" == help ]] || exit 2
    ;;
esac
