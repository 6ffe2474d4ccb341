/**
 * Which process holds the other end of a loopback TCP connection: the proxy's answer to "is this
 * the guest's Chromium?". The kernel's socket table (/proc/net/tcp) gives the socket's inode for
 * the peer's address and port; the process whose descriptor points at that inode is the peer. The
 * proxy admits a peer only when that process is in Chromium's process group, which the guest made
 * when it started Chromium and which no other process of the guest can join (a process may join
 * only a group of its own session, and Chromium's session is its own).
 *
 * Deno refuses /proc to a role short of full permissions, so the look is a small shell script the
 * guest runs (it holds `run` for its execs and desktop), one per proxied connection.
 */

// $1 the peer as /proc/net/tcp spells it, $2 the proxy likewise, $3 Chromium's process group, $4
// the pid that held the last admitted connection (Chromium's network service), looked at first,
// $5 and $6 the peer and the proxy as ss spells them. The socket's inode comes from ss, whose filter
// the kernel applies (a busy /proc/net/tcp has thousands of lines), else from awk over the table.
const SCRIPT = `
if command -v ss >/dev/null 2>&1; then
  out=$(ss -Htne state established src "$5" dst "$6" 2>/dev/null)
  case "$out" in *ino:*) inode=\${out##*ino:}; inode=\${inode%% *} ;; *) inode= ;; esac
else
  inode=$(awk -v a="$1" -v b="$2" '$2==a && $3==b {print $10; exit}' /proc/net/tcp)
fi
[ -n "$inode" ] && [ "$inode" != 0 ] || { echo nosocket; exit 0; }
group=$3
holds() { [ -n "$(find /proc/$1/fd -lname "socket:\\[$inode\\]" -print -quit 2>/dev/null)" ]; }
in_group() {
  read -r stat < /proc/$1/stat 2>/dev/null || return 1
  set -- \${stat##*) }
  [ "$3" = "$group" ]
}
if [ -n "$4" ] && in_group "$4" && holds "$4"; then echo "ok $4"; exit 0; fi
for dir in /proc/[0-9]*; do
  pid=\${dir#/proc/}
  if in_group "$pid" && holds "$pid"; then echo "ok $pid"; exit 0; fi
done
echo other
`;

/**
 * The same look as one long-lived Perl process (Debian's perl-base is Essential), asked one line
 * "PEER LOCAL GROUP" at a time and answering "ok PID", "other" or "nosocket": no program is started
 * per connection, which on a loaded machine costs tens of milliseconds.
 */
const PERL = String.raw`$| = 1;
my $last = "";
sub group_of { my ($pid) = @_; open(my $f, "<", "/proc/$pid/stat") or return ""; my $s = <$f>; close $f; $s =~ s/^.*\) //s; my @f = split / /, $s; return $f[2] // ""; }
sub holds { my ($pid, $link) = @_; opendir(my $d, "/proc/$pid/fd") or return 0; for my $fd (readdir $d) { my $to = readlink("/proc/$pid/fd/$fd"); if (defined $to && $to eq $link) { closedir $d; return 1; } } closedir $d; return 0; }
while (my $line = <STDIN>) {
  chomp $line; my ($peer, $local, $group) = split / /, $line;
  my $inode = "";
  if (open(my $t, "<", "/proc/net/tcp")) { while (my $row = <$t>) { my @f = split " ", $row; if ($f[1] eq $peer && $f[2] eq $local) { $inode = $f[9]; last; } } close $t; }
  if ($inode eq "" || $inode eq "0") { print "nosocket\n"; next; }
  my $link = "socket:[$inode]"; my $found = "";
  if ($last ne "" && group_of($last) eq $group && holds($last, $link)) { $found = $last; }
  else { opendir(my $p, "/proc"); for my $pid (grep { /^\d+$/ } readdir $p) { if (group_of($pid) eq $group && holds($pid, $link)) { $found = $pid; last; } } closedir $p; }
  if ($found ne "") { $last = $found; print "ok $found\n"; } else { print "other\n"; }
}
`;

/** An IPv4 address and port as /proc/net/tcp spells them (`0100007F:1F90`). */
export function procAddress(address: string, port: number): string {
  const parts = address.split(".").map(Number);
  const hex = parts.reverse().map((part) => part.toString(16).padStart(2, "0")).join("");
  return `${hex}:${port.toString(16).padStart(4, "0")}`.toUpperCase();
}

/** Admits only peers in Chromium's process group. */
export class PeerCheck {
  #last = "";
  #perl: {
    child: Deno.ChildProcess;
    writer: WritableStreamDefaultWriter<Uint8Array>;
    lines: ReadableStreamDefaultReader<string>;
  } | null = null;
  #perlFailed = false;
  #turn: Promise<unknown> = Promise.resolve();

  /** `perl: false` looks with the shell script only (where there is no Perl; and for tests). */
  constructor(private readonly group: () => number | null, options: { perl?: boolean } = {}) {
    this.#perlFailed = options.perl === false;
  }

  /** null when the peer is in the group, else the reason it is refused. */
  async refusal(peer: Deno.NetAddr, local: Deno.NetAddr): Promise<string | null> {
    const group = this.group();
    if (group === null) return "Chromium is not running, and only Chromium may use this proxy";
    if (!/^\d+\.\d+\.\d+\.\d+$/.test(peer.hostname)) {
      return "the proxy admits IPv4 loopback connections only";
    }
    const said = (await this.#askPerl(peer, local, group)) ??
      (await this.#askShell(peer, local, group));
    if (said.startsWith("ok ")) {
      this.#last = said.slice(3);
      return null;
    }
    if (said === "nosocket") return "the connection's socket was not found in /proc/net/tcp";
    return "the connection does not come from the guest's Chromium";
  }

  /** Stops the Perl helper, if it runs. */
  close(): void {
    try {
      this.#perl?.child.kill("SIGKILL");
    } catch {
      // gone
    }
    this.#perl = null;
  }

  /** One question to the Perl helper, one at a time; null when there is no Perl. */
  #askPerl(peer: Deno.NetAddr, local: Deno.NetAddr, group: number): Promise<string | null> {
    const ask = async (): Promise<string | null> => {
      if (this.#perlFailed) return null;
      try {
        if (this.#perl === null) {
          const child = new Deno.Command("perl", {
            args: ["-e", PERL],
            stdin: "piped",
            stdout: "piped",
            stderr: "null",
          }).spawn();
          const lines = child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(
            lineSplitter(),
          ).getReader();
          this.#perl = { child, writer: child.stdin.getWriter(), lines };
        }
        const line = `${procAddress(peer.hostname, peer.port)} ${
          procAddress(local.hostname, local.port)
        } ${group}\n`;
        await this.#perl.writer.write(new TextEncoder().encode(line));
        const { value, done } = await this.#perl.lines.read();
        if (done) throw new Error("the helper ended");
        return value.trim();
      } catch {
        this.close();
        this.#perlFailed = true;
        return null;
      }
    };
    const answer = this.#turn.then(ask, ask);
    this.#turn = answer;
    return answer;
  }

  async #askShell(peer: Deno.NetAddr, local: Deno.NetAddr, group: number): Promise<string> {
    const output = await new Deno.Command("/bin/sh", {
      args: [
        "-c",
        SCRIPT,
        "sh",
        procAddress(peer.hostname, peer.port),
        procAddress(local.hostname, local.port),
        String(group),
        this.#last,
        `${peer.hostname}:${peer.port}`,
        `${local.hostname}:${local.port}`,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output().catch(() => null);
    return output === null ? "" : new TextDecoder().decode(output.stdout).trim();
  }
}

function lineSplitter(): TransformStream<string, string> {
  let rest = "";
  return new TransformStream({
    transform(chunk, controller) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop()!;
      for (const part of parts) controller.enqueue(part);
    },
  });
}
