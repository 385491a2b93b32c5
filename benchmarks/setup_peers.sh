#!/usr/bin/env bash
# Install the peers the benchmarks compare with, inside benchmarks/ (git-ignored):
# ajv-cli + ajv-formats (versions pinned in package.json / package-lock.json) and
# check-jsonschema in its own virtual environment.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
python3 -m venv .peers-venv
.peers-venv/bin/pip install -q "check-jsonschema==0.39.0"
