#!/usr/bin/env bash
# The README's test command: every test of the workspace, including the browser tests.
# Installs Debian's Chromium first when it is missing (the browser tests drive it headless).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${PERFSCAPE_SKIP_BROWSER_TESTS:-}" ] && [ ! -x /usr/bin/chromium ]; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=""
        [ "$(id -u)" -ne 0 ] && SUDO="sudo"
        echo "test.sh: installing Debian's chromium for the browser tests"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
    else
        echo "test.sh: /usr/bin/chromium is missing and apt-get is not available; install Chromium or set PERFSCAPE_SKIP_BROWSER_TESTS=1" >&2
        exit 1
    fi
fi

cargo test --workspace "$@"
