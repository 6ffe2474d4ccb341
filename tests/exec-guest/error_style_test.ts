/**
 * One error style across the guest's routers, exec, files, host and computer use alike: the seed's
 * shape `{"error": {"code", "message", "status"}}` with status the HTTP status, and a message that
 * is one lowercase sentence (clauses joined by ";", no full stop, a runbook pointer last where there
 * is one). A bad body reads the same on every router.
 */
import { assert, assertEquals } from "../assert.ts";
import { createDesktop } from "../../mod/cua/mod.ts";
import { type Answer, call, type GuestUnderTest, withGuest } from "./helpers.ts";
import { testOptions } from "../cua/fixture.ts";

/** The ways a message breaks the style, or [] if it keeps it. */
function styleProblems(message: string): string[] {
  const problems: string[] = [];
  if (/\.\s*$/.test(message)) problems.push("ends with a full stop");
  if (/[^.]\.\s+\S/.test(message.replace(/"[^"]*"/g, '""'))) {
    problems.push("holds more than one sentence");
  }
  // An identifier may lead (BOX_CUA, X11 names); a capitalised word may not.
  if (/^[A-Z][a-z]/.test(message)) problems.push("starts with a capital");
  if (/see runbook\.md#/.test(message) && !/see runbook\.md#[a-z0-9-]+$/.test(message)) {
    problems.push("goes on after its runbook pointer");
  }
  return problems;
}

function assertStyle(what: string, answer: Answer): void {
  assertShape(what, answer);
  const message = answer.body.error.message;
  assertEquals(styleProblems(message), [], `${what}: ${JSON.stringify(message)}`);
}

function assertShape(what: string, answer: Answer): void {
  assert(answer.status >= 400, `${what} should fail: ${answer.text}`);
  const error = answer.body?.error;
  assertEquals(
    Object.keys(error ?? {}).sort(),
    ["code", "message", "status"],
    `${what}: ${answer.text}`,
  );
  assertEquals(error.status, answer.status, `${what}: the status in the body`);
}

/** Runs `work` on an in-process guest with a desktop (not started) mounted on its host service. */
async function withDesktopGuest(
  options: Parameters<typeof testOptions>[1],
  work: (guest: GuestUnderTest, workspace: string) => Promise<void>,
): Promise<void> {
  const desktop = createDesktop(testOptions("/nonexistent-workspace", options));
  try {
    await withGuest({}, (guest) => work(guest, guest.workspace), {
      extras: { mounts: desktop.mounts() },
    });
  } finally {
    await desktop.stop();
  }
}

const post = (json: unknown) => ({ method: "POST", json });

Deno.test("every router's errors keep one shape and one sentence style", async () => {
  await withDesktopGuest({}, async (guest) => {
    await Deno.mkdir(`${guest.workspace}/dir`);
    const { exec, host } = guest;
    const cases: [string, string, Parameters<typeof call>[2]][] = [
      ["exec: a bad body", `${exec}/v1/exec`, post({ command: 7 })],
      ["exec: an unknown field", `${exec}/v1/exec`, post({ command: ["true"], nope: 1 })],
      ["exec: too long a timeout", `${exec}/v1/exec`, post({ command: ["true"], timeout_ms: 1e9 })],
      ["exec: pty", `${exec}/v1/exec`, post({ command: ["true"], pty: true })],
      ["exec: a cwd outside", `${exec}/v1/exec`, post({ command: ["true"], cwd: "/etc" })],
      ["exec: no such program", `${exec}/v1/exec`, post({ command: ["/no/such/program"] })],
      ["exec: an unknown id", `${exec}/v1/exec/exec-nope`, {}],
      ["files: missing", `${exec}/v1/files?path=nope`, {}],
      ["files: outside", `${exec}/v1/files?path=../x`, {}],
      ["files: a directory as raw", `${exec}/v1/files/raw?path=dir`, {}],
      ["files: a bad body", `${exec}/v1/files`, { method: "PUT", json: { path: 1 } }],
      ["files: bad base64", `${exec}/v1/files`, {
        method: "PUT",
        json: { path: "a", content: "!!", encoding: "base64" },
      }],
      ["no route", `${exec}/v1/nowhere`, {}],
      ["no token", `${exec}/v1/status`, { headers: { authorization: "Bearer wrong" } }],
      ["cua: a bad body", `${host}/v1/cua/click`, post({ x: "left" })],
      ["cua: out of range", `${host}/v1/cua/click`, post({ x: 5000, y: 1 })],
      ["cua: a bad key", `${host}/v1/cua/key`, post({ key: "ctrl+nosuchkey" })],
      ["cua: an empty recipe", `${host}/v1/cua/batch`, post({ steps: [] })],
      [
        "cua: a recipe with two problems",
        `${host}/v1/cua/batch`,
        post({
          steps: [{ op: "wait", ms: 999_999 }, { op: "click", x: -1, y: 1 }],
          record: true,
        }),
      ],
      [
        "cua: artifact_dir outside",
        `${host}/v1/cua/batch`,
        post({
          steps: [{ op: "wait", ms: 1 }],
          artifact_dir: "../outside",
        }),
      ],
      ["cua: no display", `${host}/v1/cua/click`, post({ x: 1, y: 1 })],
    ];
    const broken: string[] = [];
    for (const [what, url, init] of cases) {
      const answer = await call(guest, url, init);
      assertShape(what, answer);
      const problems = styleProblems(answer.body.error.message);
      if (problems.length > 0) {
        broken.push(
          `${what}: ${problems.join(", ")}: ${JSON.stringify(answer.body.error.message)}`,
        );
      }
    }
    assertEquals(broken, [], "messages out of style");
    const execBody = await call(guest, `${exec}/v1/exec`, post({ command: 7 }));
    const cuaBody = await call(guest, `${host}/v1/cua/click`, post({ x: "left" }));
    const lead = (answer: Answer) => answer.body.error.message.split(":")[0];
    assertEquals(lead(cuaBody), lead(execBody), "a bad body reads the same on exec and on cua");
  });
});

Deno.test("computer use turned off (BOX_CUA=0) answers in the same style", async () => {
  await withDesktopGuest({ cua: false }, async (guest) => {
    assertStyle("cua_disabled", await call(guest, `${guest.host}/v1/cua/screenshot`));
  });
});
