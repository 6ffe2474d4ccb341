/**
 * Who may use the proxy, and where the laptop client may go: the peer check against real
 * processes (one in the admitted process group, this test's own process outside it), and the
 * client's allow list on private, loopback and public addresses.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { decide, isPrivateAddress } from "../../mod/egress-tunnel/mod.ts";
import { PeerCheck } from "../../mod/egress-tunnel/peer_check.ts";

for (const perl of [true, false]) {
  Deno.test(`the peer check (${perl ? "its Perl helper" : "the shell script"}) admits a connection from a process of the admitted group and refuses this process's own`, async () => {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    // A stand-in for Chromium: its own process group (detached), holding a connection to us.
    const child = new Deno.Command("bash", {
      args: ["-c", `exec 3<>/dev/tcp/127.0.0.1/${port}; read -u 3 line`],
      detached: true,
      stdout: "null",
      stderr: "null",
    }).spawn();
    const check = new PeerCheck(() => child.pid, { perl });
    try {
      const fromChild = await listener.accept();
      assertEquals(
        await check.refusal(
          fromChild.remoteAddr as Deno.NetAddr,
          fromChild.localAddr as Deno.NetAddr,
        ),
        null,
      );
      const mine = await Deno.connect({ hostname: "127.0.0.1", port });
      const fromMe = await listener.accept();
      const refused = await check.refusal(
        fromMe.remoteAddr as Deno.NetAddr,
        fromMe.localAddr as Deno.NetAddr,
      );
      assertStringIncludes(refused ?? "", "does not come from the guest's Chromium");
      const none = new PeerCheck(() => null);
      assertStringIncludes(
        await none.refusal(
          fromChild.remoteAddr as Deno.NetAddr,
          fromChild.localAddr as Deno.NetAddr,
        ) ??
          "",
        "Chromium is not running",
      );
      mine.close();
      fromMe.close();
      await fromChild.write(new TextEncoder().encode("bye\n"));
      fromChild.close();
    } finally {
      try {
        child.kill("SIGKILL");
      } catch {
        // gone
      }
      await child.status;
      check.close();
      listener.close();
    }
  });
}

Deno.test("the client refuses private and loopback addresses unless listed, and --deny-private even then", async () => {
  for (
    const address of [
      "10.1.2.3",
      "192.168.1.20",
      "172.20.0.1",
      "127.0.0.1",
      "169.254.1.1",
      "::1",
      "fd00::1",
    ]
  ) {
    assert(isPrivateAddress(address), address);
    const refused = await decide({ allow: [], denyPrivate: false }, address);
    assert("refused" in refused, address);
    assertStringIncludes(refused.refused, "private or loopback");
  }
  assertEquals(await decide({ allow: ["192.168.1.0/24"], denyPrivate: false }, "192.168.1.20"), {
    address: "192.168.1.20",
  });
  const denied = await decide({ allow: ["192.168.1.0/24"], denyPrivate: true }, "192.168.1.20");
  assert("refused" in denied);
  const unlisted = await decide({ allow: ["192.168.1.0/24"], denyPrivate: false }, "192.168.2.1");
  assert("refused" in unlisted);
  // A public address is allowed by default, and refused when an allow list leaves it out.
  assertEquals(await decide({ allow: [], denyPrivate: false }, "93.184.216.34"), {
    address: "93.184.216.34",
  });
  assert(
    "refused" in await decide({ allow: ["*.corp.example"], denyPrivate: false }, "93.184.216.34"),
  );
  // A name is judged by what it resolves to: localhost is loopback, refused unless listed.
  assert("refused" in await decide({ allow: [], denyPrivate: false }, "localhost"));
  assertEquals(
    (await decide({ allow: ["localhost"], denyPrivate: false }, "localhost") as { address: string })
      .address.length > 0,
    true,
  );
});
