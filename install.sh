#!/usr/bin/env bash
# Sets up gurt on a Debian 12 machine that has Node.js and npm: Deno 2.9.6 from the npm registry,
# the locked dependencies, bubblewrap (the sandbox of the built-in tools), and `gurt` on the PATH.
# With --test, also the Debian packages the tests need. Safe to run again: it changes only what is missing.
set -euo pipefail

DENO_VERSION=2.9.6
here=$(cd "$(dirname "$0")" && pwd)
with_test=0
for arg in "$@"; do
  case "$arg" in
    --test) with_test=1 ;;
    -h | --help)
      echo "usage: ./install.sh [--test]"
      echo "  installs Deno ${DENO_VERSION}, gurt's dependencies and the gurt command;"
      echo "  --test also installs the Debian packages the test suite needs."
      exit 0
      ;;
    *)
      echo "install.sh: unknown option $arg (try --help)" >&2
      exit 2
      ;;
  esac
done

say() { printf 'install.sh: %s\n' "$*"; }

# Deno, from the npm registry, when missing or older than DENO_VERSION.
have_deno() {
  command -v deno >/dev/null 2>&1 || return 1
  local v
  v=$(deno --version 2>/dev/null | sed -n 's/^deno \([0-9.]*\).*/\1/p')
  [ -n "$v" ] && [ "$(printf '%s\n%s\n' "$DENO_VERSION" "$v" | sort -V | head -n1)" = "$DENO_VERSION" ]
}
if have_deno; then
  say "deno $(deno --version | sed -n 's/^deno \([0-9.]*\).*/\1/p') is already installed"
else
  say "installing deno ${DENO_VERSION} from the npm registry"
  npm install -g --allow-scripts=deno "deno@${DENO_VERSION}" >/dev/null 2>&1 ||
    npm install -g "deno@${DENO_VERSION}" >/dev/null
  hash -r
  have_deno || { say "deno ${DENO_VERSION} did not install; see the npm output above" >&2; exit 1; }
fi
deno_bin=$(command -v deno)

# The locked dependencies, into node_modules/, so an installed box runs offline.
cd "$here"
deno install --frozen >/dev/null 2>&1 || {
  say "deno install failed; rerun 'deno install --frozen' in $here to see why" >&2
  exit 1
}
say "dependencies installed from deno.lock"

# Debian packages: always the sandbox of the built-in tools (bubblewrap) and libssl3 (the
# libcrypto that gurt audit verify hashes with; without it, it hashes more slowly with
# node:crypto); with --test, also what the tests need: the desktop, the browser, curl, openssl
# (test certificates), gcc (a test rebuilds the guest's session helper from its C source and
# compares it with the checked-in bytes), libcap2-bin (setcap: a test shows a tool cannot set a
# file capability), python3 (the attack tests' racers and prctl calls, run as a task would).
packages=(bubblewrap libssl3)
if [ "$with_test" = 1 ]; then
  packages+=(xvfb openbox xdotool wmctrl x11-utils x11-apps x11-xkb-utils imagemagick
    ffmpeg x11vnc novnc websockify chromium fonts-dejavu-core curl procps openssl gcc libcap2-bin
    python3)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  say "Debian packages already installed: ${packages[*]}"
elif [ "$(id -u)" != 0 ]; then
  say "missing Debian packages: ${missing[*]}; install them as root (apt-get install ${missing[*]}), or built-in tools are refused (see runbook.md#runtime-unavailable)" >&2
else
  say "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# gurt itself: a compiled binary where Deno's runtime image can be had, else a launcher.
if [ "$(id -u)" = 0 ]; then bindir=/usr/local/bin; else bindir="${HOME}/.local/bin"; fi
mkdir -p "$bindir"
target="$bindir/gurt"
flags=(--unstable-worker-options --unstable-no-legacy-abort --allow-all --no-prompt --frozen --config "$here/deno.json")
launcher=$(
  cat <<LAUNCH
#!/bin/sh
# gurt launcher written by install.sh: runs main.ts from $here. The main thread parses the
# command; each role then runs in a Worker holding only that role's permissions.
exec "$deno_bin" run --quiet ${flags[*]} "$here/main.ts" "\$@"
LAUNCH
)
compiled=0
if [ -n "${DENORT_BIN:-}" ] || [ "${GURT_TRY_COMPILE:-1}" = 1 ]; then
  tmp=$(mktemp -d)
  if timeout 120 "$deno_bin" compile --quiet "${flags[@]}" --include "$here/mod" \
    -o "$tmp/gurt" "$here/main.ts" >"$tmp/log" 2>&1 && "$tmp/gurt" --version >/dev/null 2>&1; then
    install -m 0755 "$tmp/gurt" "$target"
    compiled=1
  fi
  rm -rf "$tmp"
fi
if [ "$compiled" = 1 ]; then
  say "built a compiled gurt binary at $target"
else
  if [ ! -f "$target" ] || [ "$(cat "$target")" != "$launcher" ]; then
    printf '%s\n' "$launcher" >"$target"
    chmod 0755 "$target"
  fi
  say "deno compile could not get Deno's runtime image (denort) here;"
  say "installed a launcher at $target that runs main.ts with the same per-role permissions"
fi
case ":$PATH:" in
  *":$bindir:"*) ;;
  *) say "note: $bindir is not on your PATH; add it to run 'gurt'" ;;
esac
"$target" --version >/dev/null && say "gurt $("$target" --version) is ready"
