#!/bin/sh
# Install what the Lua tests and benchmark need beyond pip: a standalone
# `luajit` (for the C-ABI test) and lua-cjson (the reference encoder/decoder).
# Idempotent. Uses apt-get only when running as root on a system that has it;
# otherwise prints what is missing and exits 0 (the tests then skip with a
# message). lupa itself comes from pip (the `lua` extra).
set -u

have_luajit() { command -v luajit >/dev/null 2>&1; }
have_cjson() {
    for f in /usr/lib/*/lua/5.1/cjson.so /usr/lib/lua/5.1/cjson.so /usr/local/lib/lua/5.1/cjson.so; do
        [ -f "$f" ] && return 0
    done
    return 1
}

missing=""
have_luajit || missing="$missing luajit"
have_cjson || missing="$missing lua-cjson"

if [ -z "$missing" ]; then
    echo "install-lua-deps: luajit and lua-cjson are present"
    exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "install-lua-deps: installing$missing with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq $missing >/dev/null || {
        echo "install-lua-deps: apt-get failed; the Lua tests that need$missing will skip" >&2
        exit 0
    }
else
    echo "install-lua-deps: missing:$missing (Debian/Ubuntu: sudo apt-get install$missing);"
    echo "install-lua-deps: the tests that need them skip with a message"
fi
exit 0
