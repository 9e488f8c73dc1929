#!/usr/bin/env bash
# Makes (or updates) a virtualenv with the client and what its tests need: pytest, cryptography, LangGraph,
# langchain-core and langchain. Usage: clients/python/scripts/test-env.sh VENV_DIR. Used by .ci/run and by the jest wrapper
# (test/e2e/python-client.e2e-spec.ts); prints the venv's python on its last line.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:?usage: test-env.sh VENV_DIR}"
python="${PYTHON:-python3}"

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
# An index that cannot be reached is not worth waiting for: fail over to the others at once.
export PIP_RETRIES="${PIP_RETRIES:-0}"

# langchain-core 1.6 needs langchain-protocol, type definitions only. Some package indexes (this project's CI
# mirror among them) lack it: then a type-only stand-in of the names langchain-core imports is installed.
if ! "$venv/bin/python" -c 'import langchain_protocol' 2>/dev/null; then
  if ! "${pip[@]}" 'langchain-protocol>=0.0.17' 2>/dev/null; then
    echo "test-env: langchain-protocol is not in the package index; installing the type-only stand-in from compat/" >&2
    "${pip[@]}" "$here/compat/langchain-protocol"
  fi
fi
"${pip[@]}" "$here[test]"
# The client itself again, from this tree, whatever version an earlier run left.
"${pip[@]}" --no-deps --force-reinstall "$here"
"$venv/bin/python" -c 'import tollgate, langgraph, langchain, cryptography, pytest' >&2
echo "$venv/bin/python"
