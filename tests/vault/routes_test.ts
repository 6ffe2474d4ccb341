/** The vault's admin routes: set, list, remove, deny, allow; the Anthropic key check; no value out. */
import { assert, assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import { startBox } from "../kit/mod.ts";
import { startFakeAnthropic } from "./fake_anthropic.ts";
import { putKey, vaultFolder, withVaultBox } from "./helpers.ts";

const GOOD = "sk-ant-api03-good-key-for-the-fake-0001";
const BAD = "sk-ant-api03-refused-key-never-saved-02";

Deno.test("PUT sets a key at once, 0600 and atomically, with its set time; GET lists names only", async () => {
  await withVaultBox("# kept comment\nOLD_TOKEN=old-token-value-1\n", async (box, folder) => {
    await putKey(box, "STRIPE_SECRET_KEY", "sk_live_stripe_value_123");
    const text = await Deno.readTextFile(folder.path);
    assertStringIncludes(text, "# kept comment\n");
    assertStringIncludes(text, "OLD_TOKEN=old-token-value-1\n");
    assert(
      /# set STRIPE_SECRET_KEY \d{4}-.*Z\nSTRIPE_SECRET_KEY=sk_live_stripe_value_123\n/.test(text),
    );
    assertEquals((await Deno.stat(folder.path)).mode! & 0o777, 0o600);
    await assertNoFile(`${folder.path}.tmp`);
    assertEquals(box.core.deps.vault.value("STRIPE_SECRET_KEY"), "sk_live_stripe_value_123");
    const listed = await box.admin("GET", "/api/vault");
    assertEquals(listed.status, 200);
    assertEquals(listed.body.keys.map((k: { name: string }) => k.name), [
      "OLD_TOKEN",
      "STRIPE_SECRET_KEY",
    ]);
    assert(!Number.isNaN(Date.parse(listed.body.keys[1].set)));
    assertEquals(listed.body.keys[1].denied_apps, []);
    assertNotIncludes(JSON.stringify(listed.body), "sk_live_stripe_value_123");
    const set = (await box.records()).filter((r) => r.event.type === "vault_set");
    assertEquals(set.map((r) => r.event), [{ type: "vault_set", name: "STRIPE_SECRET_KEY" }]);
  });
});

Deno.test("DELETE removes a key from the file and the redactor; an unset key is a 404", async () => {
  await withVaultBox("A_TOKEN=token-value-to-remove\nB=kept\n", async (box, folder) => {
    assertEquals(box.core.deps.redact("token-value-to-remove"), "[a vault key]");
    const removed = await box.admin("DELETE", "/api/vault/A_TOKEN");
    assertEquals(removed, { status: 200, body: { ok: true } });
    // A key written by hand gets a set comment from the file's last change at the first rewrite.
    assert(/^# set B \d{4}-[^\n]*Z\nB=kept\n$/.test(await Deno.readTextFile(folder.path)));
    assertEquals(box.core.deps.redact("token-value-to-remove"), "token-value-to-remove");
    const again = await box.admin("DELETE", "/api/vault/A_TOKEN");
    assertEquals(again.status, 404);
    assertEquals(again.body.code, "no_such_key");
    const events = (await box.records()).map((r) => r.event).filter((e) =>
      e.type.startsWith("vault")
    );
    assertEquals(events, [{ type: "vault_removed", name: "A_TOKEN" }]);
  });
});

Deno.test("names are checked: a bad name is a 400 that says what a name is, and nothing is written", async () => {
  await withVaultBox("", async (box, folder) => {
    for (const name of ["lower_key", "1ABC", "A-B", "_A"]) {
      const answer = await box.admin("PUT", `/api/vault/${name}`, { value: "v-12345678" });
      assertEquals(answer.status, 400, name);
      assertStringIncludes(answer.body.error, "is not a vault key name");
    }
    const badValue = await box.admin("PUT", "/api/vault/A_KEY", { value: "two\nlines" });
    assertEquals(badValue.status, 400);
    assertStringIncludes(badValue.body.error, "line break");
    const notJson = await box.admin("PUT", "/api/vault/A_KEY", "sk-not-json-value");
    assertEquals(notJson.status, 400);
    assertNotIncludes(JSON.stringify(notJson.body), "sk-not-json-value");
    assertEquals(await Deno.readTextFile(folder.path), "");
  });
});

Deno.test("a refused ANTHROPIC_API_KEY is a 400 and leaves the vault file byte for byte unchanged", async () => {
  const fake = startFakeAnthropic([GOOD]);
  const original = "# set ANTHROPIC_API_KEY 2026-11-01T00:00:00.000Z\nANTHROPIC_API_KEY=" + GOOD +
    "\r\nZ=last line without newline";
  const folder = await vaultFolder(original);
  const box = await startBox({
    env: { BOX_VAULT: folder.path },
    toml: `[vault]\nanthropic_base_url = "${fake.baseUrl}"\n`,
  });
  try {
    const before = await Deno.readFile(folder.path);
    const refused = await box.admin("PUT", "/api/vault/ANTHROPIC_API_KEY", { value: BAD });
    assertEquals(refused.status, 400);
    assertStringIncludes(refused.body.error, "Anthropic refused this ANTHROPIC_API_KEY (401");
    assertStringIncludes(refused.body.error, "see runbook.md#vault-key-refused");
    assertNotIncludes(JSON.stringify(refused.body), BAD);
    assertEquals(await Deno.readFile(folder.path), before);
    assertEquals(box.core.deps.vault.value("ANTHROPIC_API_KEY"), GOOD);
    assertEquals((await box.records()).filter((r) => r.event.type === "vault_set"), []);
    assertEquals(fake.requests.at(-1), { path: "/v1/models", version: "2023-06-01", key: BAD });

    const accepted = await box.admin("PUT", "/api/vault/ANTHROPIC_API_KEY", {
      value: GOOD,
    });
    assertEquals(accepted, { status: 200, body: { ok: true, name: "ANTHROPIC_API_KEY" } });
    assertEquals(fake.requests.length, 2);
  } finally {
    await box.close();
    await fake.close();
    await folder.remove();
  }
});

Deno.test("an ANTHROPIC_API_KEY that cannot be tried (Anthropic unreachable) is a 502 and not saved", async () => {
  const fake = startFakeAnthropic([GOOD]);
  const base = fake.baseUrl;
  await fake.close(); // nothing listens there any more
  const folder = await vaultFolder("");
  const box = await startBox({
    env: { BOX_VAULT: folder.path },
    toml: `[vault]\nanthropic_base_url = "${base}"\n`,
  });
  try {
    const answer = await box.admin("PUT", "/api/vault/ANTHROPIC_API_KEY", { value: GOOD });
    assertEquals(answer.status, 502);
    assertStringIncludes(answer.body.error, "could not reach Anthropic");
    // It says where it looked, from which setting, and why it failed, not only an error's class.
    assertStringIncludes(answer.body.error, `at ${base} ([vault] anthropic_base_url)`);
    assertStringIncludes(answer.body.error, "Connection refused");
    assertNotIncludes(answer.body.error, "(TypeError)");
    assertNotIncludes(answer.body.error, GOOD);
    assertEquals(await Deno.readTextFile(folder.path), "");
  } finally {
    await box.close();
    await folder.remove();
  }
});

Deno.test("an ANTHROPIC_API_KEY tried at a base URL that answers 404 is a 502 naming the URL and its setting", async () => {
  const fake = startFakeAnthropic([GOOD]);
  const base = `${fake.baseUrl}/not-the-api`;
  const folder = await vaultFolder("");
  const box = await startBox({
    env: { BOX_VAULT: folder.path },
    toml: `[vault]\nanthropic_base_url = "${base}"\n`,
  });
  try {
    const answer = await box.admin("PUT", "/api/vault/ANTHROPIC_API_KEY", { value: GOOD });
    assertEquals(answer.status, 502);
    assertStringIncludes(
      answer.body.error,
      `Anthropic at ${base} ([vault] anthropic_base_url) answered 404 not_found_error`,
    );
    assertNotIncludes(answer.body.error, "in a minute");
    assertStringIncludes(answer.body.error, "see runbook.md#vault-key-refused");
    assertEquals(await Deno.readTextFile(folder.path), "");
  } finally {
    await box.close();
    await fake.close();
    await folder.remove();
  }
});

Deno.test("deny and allow change vault-policy.json, the listing and the audit log; an unknown app is a 400", async () => {
  await withVaultBox("SHOP_KEY=shop-key-value-1\n", async (box) => {
    const denied = await box.admin("POST", "/api/vault/SHOP_KEY/deny", { app: "example" });
    assertEquals(denied.body, { ok: true, name: "SHOP_KEY", app: "example", denied: true });
    const policy = `${box.home}/vault-policy.json`;
    assertEquals(JSON.parse(await Deno.readTextFile(policy)), { deny: { example: ["SHOP_KEY"] } });
    assertEquals((await Deno.stat(policy)).mode! & 0o777, 0o600);
    const listed = await box.admin("GET", "/api/vault");
    assertEquals(listed.body.keys[0].denied_apps, ["example"]);
    const allowed = await box.admin("POST", "/api/vault/SHOP_KEY/allow", {
      app: "example",
    });
    assertEquals(allowed.body.denied, false);
    assertEquals(JSON.parse(await Deno.readTextFile(policy)), { deny: {} });
    const unknown = await box.admin("POST", "/api/vault/SHOP_KEY/deny", { app: "nope" });
    assertEquals(unknown.status, 400);
    assertStringIncludes(unknown.body.error, "there is no app nope on this box");
    const events = (await box.records()).map((r) => r.event).filter((e) =>
      e.type.startsWith("vault")
    );
    assertEquals(events, [
      { type: "vault_denied", app: "example", name: "SHOP_KEY" },
      { type: "vault_allowed", app: "example", name: "SHOP_KEY" },
    ]);
  });
});

Deno.test("the task socket refuses the vault routes with forbidden", async () => {
  await withVaultBox("", async (box) => {
    const task = await box.startTask();
    const answer = await task.request("GET", "/api/vault");
    assertEquals(answer.status, 403);
    assertEquals(answer.body.code, "forbidden");
  });
});

async function assertNoFile(path: string): Promise<void> {
  try {
    await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  throw new Error(`${path} exists`);
}

Deno.test("a key set that cannot be written to the audit log is a 503 and the vault is unchanged", async () => {
  const folder = await vaultFolder("A_KEY=before-value-1\n");
  let failWrites = false;
  const box = await startBox({
    env: { BOX_VAULT: folder.path },
    fileOps: {
      async write(file, bytes) {
        if (failWrites) throw new Error("disk full (test)");
        let written = 0;
        while (written < bytes.length) written += await file.write(bytes.subarray(written));
      },
    },
  });
  try {
    failWrites = true;
    const answer = await box.admin("PUT", "/api/vault/A_KEY", { value: "after-value-2" });
    assertEquals(answer.status, 503);
    assertEquals(answer.body.code, "audit_unavailable");
    assertStringIncludes(answer.body.error, "see runbook.md#audit-unavailable");
    assertEquals(await Deno.readTextFile(folder.path), "A_KEY=before-value-1\n");
    assertEquals(box.core.deps.vault.value("A_KEY"), "before-value-1");
    assert(box.logs.some((line) => line.includes("audit")), box.logs.join("\n"));
  } finally {
    await box.close();
    await folder.remove();
  }
});
