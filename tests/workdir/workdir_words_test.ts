/**
 * What the owner reads of a task's workdirs: each with its mode on the portal's task page (and in
 * `gurt task show`, tested in workdir_attacks_test.ts), and the journal's workdir events in words.
 */
import { assertStringIncludes } from "../assert.ts";
import { journalWords } from "../../mod/owner-text/mod.ts";
import { TaskPage } from "../../mod/portal/pages/tasks_page.tsx";

const writes = {
  type: "event",
  time: "2026-12-04T04:00:00.000Z",
  event: "workdir.writes",
  detail: {
    workdir: "/home/alice/code/shop",
    added: 1,
    changed: 1,
    removed: 0,
    bytesWritten: 17,
    files: {
      added: [{ path: "notes.txt", before: null, after: 6 }],
      changed: [{ path: "src/app.py", before: 12, after: 11 }],
      removed: [],
    },
    truncated: false,
  },
};

Deno.test("the journal's workdir events read in words: the mount with its read-only paths, the writes with their sizes, a flagged path", () => {
  assertStringIncludes(
    journalWords(writes),
    "workdir /home/alice/code/shop: 1 added, 1 changed, 0 removed, 17 B written; + notes.txt none -> 6 B, ~ src/app.py 12 B -> 11 B",
  );
  const mounted = {
    type: "event",
    time: writes.time,
    event: "workdir.mounted",
    detail: {
      path: "/home/alice/code/shop",
      mode: "rw",
      grant_mode: "ask",
      read_only_paths: [".git/hooks", ".vscode"],
      covered_env_files: [".env"],
    },
  };
  assertStringIncludes(
    journalWords(mounted),
    "workdir /home/alice/code/shop mounted rw (grant ask): 2 read-only paths, 1 .env files covered",
  );
  const flagged = {
    type: "event",
    time: writes.time,
    event: "fs.blocked",
    detail: { workdir: "/w", path: "sub/.git/hooks/x", reason: "review it" },
  };
  assertStringIncludes(journalWords(flagged), "blocked sub/.git/hooks/x: review it");
});

Deno.test("the portal's task page lists each workdir with its mode, and the summary of the task's writes", async () => {
  const page = TaskPage({
    view: {
      task: {
        id: "t1",
        prompt: "p",
        worker: { kind: "cmd" },
        tools: [],
        budgetCents: null,
        state: "done",
        created: writes.time,
        ended: writes.time,
        endReason: null,
        spentCents: 0,
        spend: [],
        hosts: [],
        workdirs: [
          { path: "/home/alice/code/shop", readOnly: false, mode: "auto" },
          { path: "/home/alice/docs", readOnly: true, mode: "ask" },
        ],
        credentials: [],
        pending: [],
      },
      journal: { total: 1, first: 0, lines: [writes] },
      records: [],
      approvals: [],
      answered: [],
    },
    csrf: "x",
    notice: null,
  });
  const html = String(await page);
  assertStringIncludes(html, "Workdirs");
  assertStringIncludes(
    html,
    "/home/alice/code/shop (writable, grant auto); /home/alice/docs (read-only, grant ask)",
  );
  assertStringIncludes(html, "+ notes.txt none -&gt; 6 B");
});
