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

# Debian's OpenMPI for the on-line ingest browser test (web/tests/online.test.mjs builds
# examples/online/stencil_online.c with mpicc and runs it with `mpirun -np 8`).
if [ -z "${PERFSCAPE_SKIP_BROWSER_TESTS:-}" ] && ! command -v mpicc >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=""
        [ "$(id -u)" -ne 0 ] && SUDO="sudo"
        echo "test.sh: installing Debian's openmpi-bin and libopenmpi-dev for the on-line ingest test"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openmpi-bin libopenmpi-dev >/dev/null
    else
        echo "test.sh: mpicc is missing and apt-get is not available; install OpenMPI or set PERFSCAPE_SKIP_BROWSER_TESTS=1" >&2
        exit 1
    fi
fi

# Python for the store test (crates/perfscape-cli/tests/store.rs reads a store with Apache
# Spark in local mode) and the Python package's test (python/tests/package.rs imports the
# package with pyarrow and pandas): one virtual environment in the user's cache (never in the
# repository or ../shared) with pyspark, pyarrow and pandas, and a Java runtime (Debian's
# openjdk-17 when missing).
venv="${XDG_CACHE_HOME:-$HOME/.cache}/perfscape/py-venv"
if [ -z "${PERFSCAPE_SPARK_PYTHON:-}" ] || [ -z "${PERFSCAPE_PYTHON:-}" ]; then
    if ! "$venv/bin/python" -c "import pyspark, pyarrow, pandas" >/dev/null 2>&1; then
        echo "test.sh: installing pyspark 4.0.0, pyarrow 26.0.1 and pandas 2.3.3 into $venv (about 600 MB, once)"
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check \
            "pyspark==4.0.0" "pyarrow==26.0.1" "pandas==2.3.3"
    fi
fi
export PERFSCAPE_SPARK_PYTHON="${PERFSCAPE_SPARK_PYTHON:-$venv/bin/python}"
export PERFSCAPE_PYTHON="${PERFSCAPE_PYTHON:-$venv/bin/python}"
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

# --no-fail-fast: every failing test binary is reported, not only the first.
cargo test --workspace --no-fail-fast "$@"
