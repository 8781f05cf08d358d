#!/bin/sh
# autogen.sh - make ./configure from a git checkout (needs autoconf,
# automake, libtool and pkg-config: apt-get install autoconf automake libtool pkg-config).
set -e
cd "$(dirname "$0")"
autoreconf --install --force --warnings=all
