/** The Audit page shows one page of records, the newest by default, with links between pages. */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { startPortalBox } from "./helpers.ts";

Deno.test("the Audit page shows the newest 50 records, an older page at ?from=, and links between them", async () => {
  const pb = await startPortalBox();
  try {
    // Each task start and stop is a record: 60 tasks make 120.
    for (let i = 0; i < 60; i++) {
      const task = await pb.box.startTask();
      await pb.box.admin("POST", `/tasks/${task.id}/stop`);
    }
    const count = (await pb.box.records()).length;
    assert(count >= 120, `only ${count} records`);
    const { cookie } = await pb.signIn();
    const page = async (query: string) => {
      const response = await fetch(`${pb.origin}/audit${query}`, { headers: { cookie } });
      return { status: response.status, text: await response.text() };
    };
    const newest = await page("");
    assertEquals(newest.status, 200);
    assertStringIncludes(newest.text, `Records ${count - 50} to ${count - 1}`);
    assertStringIncludes(newest.text, `href="/audit?from=${count - 100}"`);
    assert(!newest.text.includes("Newer records"), "the newest page has no newer page");
    const older = await page("?from=3");
    assertStringIncludes(older.text, "Records 3 to 52");
    assertStringIncludes(older.text, 'href="/audit?from=0"');
    assertStringIncludes(older.text, 'href="/audit?from=53"');
    assertStringIncludes(older.text, `The audit log verifies: ${count} records`);
    const wrong = await page("?from=abc");
    assertEquals(wrong.status, 400);
  } finally {
    await pb.close();
  }
});
