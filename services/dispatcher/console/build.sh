#!/usr/bin/env bash
# Builds the console into ../target/classes/static/console (Maven runs this in generate-resources).
# npm packages come from package-lock.json through npm's cache in ~/.cache/herald/npm: `npm ci`
# runs only when the lockfile changed since the last install, so a warm build needs no network.
# Usage: services/dispatcher/console/build.sh [build|e2e]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
export npm_config_cache="${HERALD_NPM_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/herald/npm}"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

stamp="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ "$(cat node_modules/.herald-stamp 2>/dev/null || true)" != "$stamp" ]]; then
  npm ci --prefer-offline --no-progress
  printf '%s\n' "$stamp" >node_modules/.herald-stamp
fi
npm run --silent "${1:-build}"
