#!/bin/sh
# gurt @VERSION@ as one file: this sh header, then a gzip'd tar of the Deno @DENO@ runtime and
# gurt's program (built by tools/build_dist.sh). The first run unpacks the tar into a cache folder
# named by its SHA-256 (as root /var/lib/gurt/cache, else $XDG_CACHE_HOME/gurt; GURT_CACHE
# overrides) and seals it: the list of every unpacked file's name, size, mode, owner, inode and
# change time. Each run checks the seal, so an unpacked copy that was changed is refused and
# unpacked again, then runs the program from there. Needs sh, GNU find, cmp, tail, tar, gzip and
# sha256sum.
gurt_sha=@SHA@
gurt_size=@SIZE@
gurt_offset=@OFFSET@ # the header's length in bytes

gurt_fail() {
  printf 'gurt: %s\n' "$*" >&2
  exit 1
}

# The effective uid, read without starting a process where /proc is there.
gurt_euid=
if [ -r /proc/self/status ]; then
  while read -r gurt_k gurt_real gurt_eff gurt_rest; do
    if [ "$gurt_k" = "Uid:" ]; then gurt_euid=$gurt_eff; break; fi
  done </proc/self/status
fi
[ -n "$gurt_euid" ] || gurt_euid=$(id -u)

if [ -n "${GURT_CACHE:-}" ]; then
  gurt_base=$GURT_CACHE
elif [ "$gurt_euid" = 0 ]; then
  gurt_base=/var/lib/gurt/cache
else
  case "${XDG_CACHE_HOME:-}" in
    /*) gurt_base=$XDG_CACHE_HOME/gurt ;;
    *)
      case "${HOME:-}" in
        /*) gurt_base=$HOME/.cache/gurt ;;
        *) gurt_fail "cannot choose a cache folder: HOME is not an absolute path; set GURT_CACHE; see runbook.md#dist-cache-unsafe" ;;
      esac
      ;;
  esac
fi
case "$gurt_base" in
  /*) ;;
  *) gurt_fail "GURT_CACHE must be an absolute path, got '$gurt_base'; see runbook.md#dist-cache-unsafe" ;;
esac
gurt_dir=$gurt_base/$gurt_sha

# The seal of an unpacked folder: its own owner and mode, then each file below it, but not the
# seal itself. Any write, chmod, chown, rename or new file changes a change time or a line. Kept
# as the list itself, compared by cmp: a hash of it cost one more program at every start.
gurt_seal() {
  find "$1" -path "$1" -printf '%U %m\n' -o -path "$1/seal" -prune \
    -o -printf '%P|%y|%s|%m|%U|%G|%i|%C@|%T@|%l\n' 2>/dev/null
}

gurt_run() {
  export DENO_NO_UPDATE_CHECK=1 # no call to dl.deno.land: the owner updates gurt, not Deno
  # The V8 flags of mod/config/code_dir.ts's V8_FLAGS: a regular expression that backtracks too long
  # goes on in V8's linear engine.
  exec "$gurt_dir/program/deno" run --quiet \
    --v8-flags=--enable-experimental-regexp-engine,--enable-experimental-regexp-engine-on-excessive-backtracks --unstable-worker-options \
    --unstable-no-legacy-abort --allow-all --no-prompt --frozen \
    --config "$gurt_dir/program/deno.json" "$gurt_dir/program/main.ts" "$@"
}

gurt_sealed() {
  [ -r "$gurt_dir/seal" ] && gurt_seal "$gurt_dir" | cmp -s - "$gurt_dir/seal"
}

# Later starts, first the quick look: the seal is written after every file of the copy, so while
# nothing was changed since, no file's change time is newer than the seal (a write, chmod, chown,
# rename or new file sets it to now, and nothing can set it back). One program instead of two.
# Where it sees something, or the clock is behind the seal's time, the seal itself decides.
if [ -f "$gurt_dir/seal" ] &&
  gurt_newer=$(find "$gurt_dir/seal" "$gurt_dir/program" \( -path "$gurt_dir/seal" -newermt now \) \
    -print -quit -o \( ! -path "$gurt_dir/seal" -cnewer "$gurt_dir/seal" \) -print -quit 2>/dev/null) &&
  [ -z "$gurt_newer" ]; then
  gurt_run "$@"
fi
if gurt_sealed; then gurt_run "$@"; fi

# The cache folder: made for the owner alone to write; one someone else may write is not used.
gurt_check_base() {
  gurt_stat=$(find "$gurt_base" -maxdepth 0 -printf '%U %m' 2>/dev/null) ||
    gurt_fail "cannot read the cache folder $gurt_base; see runbook.md#dist-cache-unsafe"
  set -- $gurt_stat
  if [ "$1" != "$gurt_euid" ] && [ "$1" != 0 ]; then
    gurt_fail "the cache folder $gurt_base belongs to uid $1, not to you; see runbook.md#dist-cache-unsafe"
  fi
  case "$2" in
    *[2367]? | *[2367]) gurt_fail "others may write the cache folder $gurt_base (mode $2); see runbook.md#dist-cache-unsafe" ;;
  esac
}

umask 022
if [ ! -d "$gurt_base" ]; then
  # Others pass through to the unpacked program (a task's worker runs it), never list or write.
  (umask 066 && mkdir -p -m 0711 "$gurt_base") 2>/dev/null ||
    gurt_fail "cannot make the cache folder $gurt_base; set GURT_CACHE to a folder of yours; see runbook.md#dist-cache-unwritable"
  chmod 0711 "$gurt_base"
fi
gurt_check_base

if [ -e "$gurt_dir" ] || [ -L "$gurt_dir" ]; then
  printf 'gurt: the unpacked copy in %s was changed since it was unpacked; it is set aside and unpacked again; see runbook.md#dist-cache-changed\n' "$gurt_dir" >&2
  gurt_old=$gurt_base/.changed-$gurt_sha-$$
  mv -T "$gurt_dir" "$gurt_old" 2>/dev/null && rm -rf "$gurt_old"
else
  printf 'gurt: first start of this file: unpacking it into %s\n' "$gurt_dir" >&2
fi

# Left over by an unpack that was stopped an hour or more ago.
find "$gurt_base" -maxdepth 1 -name '.unpack-*' -mmin +60 -exec rm -rf {} + 2>/dev/null
gurt_tmp=$(mktemp -d "$gurt_base/.unpack-XXXXXXXX" 2>/dev/null) ||
  gurt_fail "cannot write in the cache folder $gurt_base; set GURT_CACHE to a folder of yours; see runbook.md#dist-cache-unwritable"
trap 'rm -rf "$gurt_tmp"' EXIT
trap 'exit 1' HUP INT TERM
chmod 0755 "$gurt_tmp"
# The payload, copied out first so that what is checked is what is unpacked.
tail -c +"$((gurt_offset + 1))" "$0" >"$gurt_tmp/payload" ||
  gurt_fail "cannot copy the payload out of $0 into $gurt_tmp (is the disk full?); see runbook.md#dist-cache-unwritable"
gurt_got=$(sha256sum <"$gurt_tmp/payload")
gurt_got=${gurt_got%% *}
if [ "$gurt_got" != "$gurt_sha" ]; then
  gurt_fail "$0 is damaged: its payload's SHA-256 is $gurt_got, not $gurt_sha (of $gurt_size bytes); copy the file again; see runbook.md#dist-damaged"
fi
mkdir "$gurt_tmp/program"
tar -xzf "$gurt_tmp/payload" -C "$gurt_tmp/program" --no-same-owner ||
  gurt_fail "cannot unpack $0 into $gurt_tmp; see runbook.md#dist-cache-unwritable"
rm -f "$gurt_tmp/payload"
gurt_seal "$gurt_tmp" >"$gurt_tmp/seal"
chmod 0444 "$gurt_tmp/seal"
# Into place in one rename; a start that ran at the same time and got there first wins.
mv -T "$gurt_tmp" "$gurt_dir" 2>/dev/null || rm -rf "$gurt_tmp"
trap - EXIT
if gurt_sealed; then gurt_run "$@"; fi
gurt_fail "the copy unpacked into $gurt_dir does not match its own seal (does this system's find lack -printf?); see runbook.md#dist-cache-changed"
exit 1
