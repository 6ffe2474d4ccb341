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

// $1 the peer as /proc/net/tcp spells it, $2 the proxy likewise, $3 Chromium's process group.
const SCRIPT = `
inode=$(awk -v a="$1" -v b="$2" '$2==a && $3==b {print $10; exit}' /proc/net/tcp)
[ -n "$inode" ] && [ "$inode" != 0 ] || { echo nosocket; exit 0; }
for pid in $(awk -v g="$3" '{ s=$0; sub(/^.*\\) /, "", s); split(s, f, " "); if (f[3]==g) { split(FILENAME, p, "/"); print p[3] } }' /proc/[0-9]*/stat 2>/dev/null); do
  if ls -l /proc/$pid/fd 2>/dev/null | grep -qF "socket:[$inode]"; then echo "ok $pid"; exit 0; fi
done
echo other
`;

/** An IPv4 address and port as /proc/net/tcp spells them (`0100007F:1F90`). */
export function procAddress(address: string, port: number): string {
  const parts = address.split(".").map(Number);
  const hex = parts.reverse().map((part) => part.toString(16).padStart(2, "0")).join("");
  return `${hex}:${port.toString(16).padStart(4, "0")}`.toUpperCase();
}

/** Admits only peers in Chromium's process group. */
export class PeerCheck {
  constructor(private readonly group: () => number | null) {}

  /** null when the peer is in the group, else the reason it is refused. */
  async refusal(peer: Deno.NetAddr, local: Deno.NetAddr): Promise<string | null> {
    const group = this.group();
    if (group === null) return "Chromium is not running, and only Chromium may use this proxy";
    if (!/^\d+\.\d+\.\d+\.\d+$/.test(peer.hostname)) {
      return "the proxy admits IPv4 loopback connections only";
    }
    const output = await new Deno.Command("/bin/sh", {
      args: [
        "-c",
        SCRIPT,
        "sh",
        procAddress(peer.hostname, peer.port),
        procAddress(local.hostname, local.port),
        String(group),
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output().catch(() => null);
    const said = output === null ? "" : new TextDecoder().decode(output.stdout).trim();
    if (said.startsWith("ok ")) return null;
    if (said === "nosocket") return "the connection's socket was not found in /proc/net/tcp";
    return "the connection does not come from the guest's Chromium";
  }
}
