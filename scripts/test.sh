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

# Apache Spark for the store test (crates/perfscape-cli/tests/store.rs reads a store with Spark
# in local mode): pyspark in a virtual environment in the user's cache (never in the
# repository or ../shared), and a Java runtime (Debian's openjdk-17 when missing).
if [ -z "${PERFSCAPE_SPARK_PYTHON:-}" ]; then
    venv="${XDG_CACHE_HOME:-$HOME/.cache}/perfscape/spark-venv"
    if ! "$venv/bin/python" -c "import pyspark" >/dev/null 2>&1; then
        echo "test.sh: installing pyspark 4.0.0 into $venv (about 430 MB, once)"
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check "pyspark==4.0.0"
    fi
    export PERFSCAPE_SPARK_PYTHON="$venv/bin/python"
fi
if ! command -v java >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=""
        [ "$(id -u)" -ne 0 ] && SUDO="sudo"
        echo "test.sh: installing Debian's openjdk-17-jre-headless for the Spark test"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null
    else
        echo "test.sh: java is missing and apt-get is not available; install a Java 17+ runtime" >&2
        exit 1
    fi
fi

cargo test --workspace "$@"
