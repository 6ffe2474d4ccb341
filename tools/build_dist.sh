#!/usr/bin/env bash
# Builds dist/gurt: one executable file holding the Deno runtime, gurt's module graph and its npm
# dependencies (README.md, "gurt as one file"). Two forms:
#   compiled         `deno compile`, where Deno's runtime image (denort) can be had: DENORT_BIN
#                    names one, or Deno's cache holds the one for this Deno version;
#   self-extracting  elsewhere: tools/dist/header.sh, then a gzip'd tar of the Deno binary, main.ts,
#                    mod/ and the npm modules bundled by tools/dist/deps.ts.
# Both run every role in a Worker with that role's permissions, as the checkout does.
# Usage: tools/build_dist.sh [--if-stale] [--form compiled|self-extracting] [OUT]
#   --if-stale  do nothing when OUT was built from the same sources, Deno and DENORT_BIN
#   --form      insist on one form (default: compiled where it can be, else self-extracting);
#               GURT_DIST_FORM does the same
# The output is reproducible: the same sources and Deno give the same bytes.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if_stale=0
form=${GURT_DIST_FORM:-}
out=
while [ $# -gt 0 ]; do
  case "$1" in
    --if-stale) if_stale=1 ;;
    --form)
      form=${2:-}
      shift
      ;;
    -h | --help)
      sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    -*)
      echo "build_dist.sh: unknown option $1 (try --help)" >&2
      exit 2
      ;;
    *) out=$1 ;;
  esac
  shift
done
out=${out:-$here/dist/gurt}
case "$form" in
  "" | compiled | self-extracting) ;;
  *)
    echo "build_dist.sh: --form is compiled or self-extracting, not '$form'" >&2
    exit 2
    ;;
esac
say() { printf 'build_dist.sh: %s\n' "$*" >&2; }

# The real Deno binary (not a wrapper script that npm may put on the PATH), and its version.
deno_bin=$(deno eval --quiet 'console.log(Deno.execPath())')
deno_version=$("$deno_bin" --version | sed -n 's/^deno \([0-9.]*\) .*/\1/p')
deno_target=$("$deno_bin" --version | sed -n '1s/.*, \([a-z0-9_]*-[a-z0-9_-]*\)).*/\1/p')
version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$here/deno.json")

# What the program is made from: every source file, the build's own files and Deno. The output
# also depends on DENORT_BIN and --form, which decide the form.
sources=$(
  cd "$here"
  {
    find main.ts deno.json deno.lock mod tools/build_dist.sh tools/dist -type f -print0 |
      sort -z | xargs -0 sha256sum
    echo "deno $deno_version $(stat -c '%s' "$deno_bin")"
  } | sha256sum | cut -d' ' -f1
)
inputs=$(printf '%s denort=%s form=%s\n' "$sources" "${DENORT_BIN:-}" "$form" | sha256sum | cut -d' ' -f1)
stamp="$(dirname "$out")/.$(basename "$out").inputs"
if [ "$if_stale" = 1 ] && [ -x "$out" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$inputs" ]; then
  say "$out is up to date"
  exit 0
fi
mkdir -p "$(dirname "$out")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The program as both forms carry it: main.ts and mod/, a dist.json that `gurt --version` reads.
stage_program() {
  local dir=$1 form=$2
  mkdir -p "$dir"
  cp -R "$here/main.ts" "$here/mod" "$dir/"
  printf '{ "form": "%s", "version": "%s", "deno": "%s", "sources": "%s" }\n' \
    "$form" "$version" "$deno_version" "$sources" >"$dir/dist.json"
}

# Where deno compile finds its runtime image when DENORT_BIN is not set.
denort_cached() {
  local dir
  dir=$("$deno_bin" info --json 2>/dev/null | sed -n 's/^ *"denoDir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] && [ -f "$dir/dl/release/v$deno_version/denort-$deno_target.zip" ]
}

build_compiled() {
  local stage=$work/compiled
  stage_program "$stage" compiled
  cp "$here/deno.json" "$here/deno.lock" "$stage/"
  ln -s "$here/node_modules" "$stage/node_modules"
  (
    cd "$stage"
    # --v8-flags: mod/config/code_dir.ts's V8_FLAGS, kept in the binary.
    timeout 300 "$deno_bin" compile --quiet \
      --v8-flags=--enable-experimental-regexp-engine,--enable-experimental-regexp-engine-on-excessive-backtracks \
      --unstable-worker-options --unstable-no-legacy-abort \
      --allow-all --no-prompt --frozen --config deno.json --include mod --include dist.json \
      -o "$work/gurt" main.ts
  ) >"$work/compile.log" 2>&1 || return 1
  # A full deno binary given as DENORT_BIN compiles, but the output is Deno itself.
  local said
  said=$(timeout 60 "$work/gurt" --version 2>>"$work/compile.log" </dev/null) || return 1
  case "$said" in
    "gurt $version (compiled,"*) ;;
    *)
      echo "the compiled file's --version said '${said%%$'\n'*}', not gurt's; is DENORT_BIN a denort binary?" >>"$work/compile.log"
      return 1
      ;;
  esac
}

build_self_extracting() {
  local program=$work/sfx/program payload=$work/payload
  stage_program "$program" self-extracting
  cp "$deno_bin" "$program/deno"
  "$deno_bin" run --quiet --allow-all --config "$here/deno.json" "$here/tools/dist/deps.ts" \
    "$here" "$program" >&2
  # What is not run: the C sources of the guest's helpers (their bytes are in mod/ as .ts).
  find "$program/mod" -name '*.c' -delete
  chmod -R u=rwX,go=rX "$program"
  chmod 0755 "$program/deno"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu \
    -C "$program" -cf - . | gzip -n -6 >"$payload"
  local sha size header offset
  sha=$(sha256sum "$payload" | cut -d' ' -f1)
  size=$(stat -c %s "$payload")
  header=$(sed -e "s/@VERSION@/$version/" -e "s/@DENO@/$deno_version/" -e "s/@SHA@/$sha/" \
    -e "s/@SIZE@/$size/" "$here/tools/dist/header.sh")
  # The offset is written with a fixed width, so writing it does not move the payload.
  offset=$(printf '%s\n' "${header/@OFFSET@/          }" | wc -c)
  printf '%s\n' "${header/@OFFSET@/$(printf '%-10s' "$offset")}" >"$work/gurt"
  cat "$payload" >>"$work/gurt"
  chmod 0755 "$work/gurt"
  say "payload sha256 $sha, $size bytes"
}

built=
if [ "$form" != self-extracting ] && { [ -n "${DENORT_BIN:-}" ] || denort_cached; }; then
  say "compiling with deno compile (runtime image: ${DENORT_BIN:-the one in Deno cache})"
  if build_compiled; then
    built=compiled
  elif [ "$form" = compiled ]; then
    cat "$work/compile.log" >&2
    say "deno compile failed"
    exit 1
  else
    say "deno compile failed (its output: $(tail -n 3 "$work/compile.log" | tr '\n' ' ')); building the self-extracting form"
  fi
elif [ "$form" = compiled ]; then
  say "deno compile needs Deno's runtime image: set DENORT_BIN to a denort $deno_version binary"
  exit 1
fi
if [ -z "$built" ]; then
  build_self_extracting
  built=self-extracting
fi
install -m 0755 "$work/gurt" "$out.tmp"
mv -f "$out.tmp" "$out"
printf '%s\n' "$inputs" >"$stamp"
say "built $out ($built, $(stat -c %s "$out") bytes)"
