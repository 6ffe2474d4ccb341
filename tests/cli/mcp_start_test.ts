/**
 * The light start of `gurt mcp` (mod/cli/mcp_start.ts): it takes `--wait-ms N` (or `=N`) and
 * `--permission-tool`, each at most once and in any order; anything else goes to the full CLI.
 */
import { assertEquals } from "../assert.ts";
import { DEFAULT_WAIT_MS } from "../../mod/mcp/mod.ts";
import { plainMcpOptions } from "../../mod/cli/mcp_start.ts";

Deno.test("the light start takes --wait-ms, --permission-tool and --ask-user-tool in any order, each at most once", () => {
  const off = { waitMs: DEFAULT_WAIT_MS, permissionTool: false, askUserTool: false };
  assertEquals(plainMcpOptions(["mcp"]), off);
  assertEquals(plainMcpOptions(["mcp", "--wait-ms", "300"]), { ...off, waitMs: 300 });
  assertEquals(plainMcpOptions(["mcp", "--wait-ms=300"]), { ...off, waitMs: 300 });
  const on = { waitMs: 300, permissionTool: true, askUserTool: false };
  assertEquals(plainMcpOptions(["mcp", "--wait-ms", "300", "--permission-tool"]), on);
  assertEquals(plainMcpOptions(["mcp", "--permission-tool", "--wait-ms", "300"]), on);
  assertEquals(plainMcpOptions(["mcp", "--permission-tool", "--wait-ms=300"]), on);
  assertEquals(plainMcpOptions(["mcp", "--wait-ms=300", "--permission-tool"]), on);
  assertEquals(plainMcpOptions(["mcp", "--permission-tool"]), {
    waitMs: DEFAULT_WAIT_MS,
    permissionTool: true,
    askUserTool: false,
  });
  assertEquals(plainMcpOptions(["mcp", "--ask-user-tool", "--wait-ms", "300"]), {
    waitMs: 300,
    permissionTool: false,
    askUserTool: true,
  });
});

Deno.test("the light start leaves to the full CLI a repeated or unknown option, a bad or missing wait, and any other command", () => {
  for (
    const args of [
      ["mcp", "--permission-tool", "--permission-tool"],
      ["mcp", "--ask-user-tool", "--ask-user-tool"],
      ["mcp", "--wait-ms", "300", "--wait-ms", "400"],
      ["mcp", "--wait-ms=300", "--wait-ms", "400"],
      ["mcp", "--wait-ms"],
      ["mcp", "--permission-tool", "--wait-ms"],
      ["mcp", "--wait-ms", "--permission-tool"],
      ["mcp", "--wait-ms", "abc"],
      ["mcp", "--permission-tool=yes"],
      ["mcp", "--help"],
      ["mcp", "--permission-tool", "--help"],
      ["mcp", "extra"],
      ["task", "mcp"],
      ["--home", "/x", "mcp"],
      [],
    ]
  ) {
    assertEquals(plainMcpOptions(args), null, args.join(" "));
  }
});
