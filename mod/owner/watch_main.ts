/**
 * The CLI role's side of `gurt task watch ID` (docs/threat-model.md#the-owners-view): follows the
 * task's journal over the admin socket and prints it. On `approval_pending` it fetches the pending
 * entry from the core (never from the event), prints the block of `gurt approvals`, and asks `type
 * 41 to approve, anything else refuses`; only exactly the id approves. `--say` shows and does not
 * ask; `--json` prints the journal's lines as JSON and contacts nothing else.
 */
import { AdminClient } from "../admin/mod.ts";
import { answerText, approvalBlock, shownText } from "../owner-text/mod.ts";
import { printOwner } from "./owner_print.ts";
import { LineReader } from "./line_reader.ts";
import { pendingId, watchLine } from "./watch_format.ts";

/** What the owner asked. */
export interface WatchArgs {
  socket: string;
  id: string;
  mode: "ask" | "say" | "json";
}

const POLL_WAIT_MS = 25_000;
const RESET = "\x1b[0m";

/** Follows the task until it ends; exit status 0 when it ended done. */
export default async function main(args: WatchArgs): Promise<number> {
  const stdin = new LineReader(Deno.stdin);
  const admin = new AdminClient(args.socket);
  let after = 0;
  for (;;) {
    const answer = await admin.journal(args.id, { after, waitMs: POLL_WAIT_MS });
    if (!answer.ok) {
      console.error(`gurt task watch: ${answer.error}`);
      return 1;
    }
    const page = answer.value;
    for (const line of page.lines) {
      if (args.mode === "json") {
        // Whole and unfolded, even on a terminal: a program reads it, and JSON has no raw newline
        // to forge a line with.
        console.log(shownText(JSON.stringify(line), { max: Infinity }));
        continue;
      }
      const text = watchLine(line);
      if (text !== null) printOwner(text);
      const approval = pendingId(line);
      if (approval !== null) await onPending(admin, { args, id: approval, stdin });
    }
    after = page.next;
    if (page.ended) {
      if (args.mode !== "json") printOwner(`task ${args.id} ended: ${page.state}`);
      return page.state === "done" ? 0 : 1;
    }
  }
}

async function onPending(
  admin: AdminClient,
  asked: { args: WatchArgs; id: number; stdin: LineReader },
): Promise<void> {
  const { args, id, stdin } = asked;
  const list = await admin.approvals();
  const items = list.ok ? list.value.items : [];
  const item = items.find((entry) => entry.approval === id);
  await Deno.stdout.write(new TextEncoder().encode(RESET));
  if (item === undefined) {
    printOwner(`approval ${id} is no longer pending`);
    return;
  }
  printOwner(approvalBlock(item, new Date()));
  if (args.mode === "say") return;
  await Deno.stderr.write(
    new TextEncoder().encode(`type ${id} to approve, anything else refuses\n`),
  );
  const typed = await stdin.readLine();
  if (typed === null) printOwner(`end of input: refusing ${id}`);
  const action = typed === String(id) ? "approve" : "refuse";
  const answer = action === "approve"
    ? await admin.approve(id)
    : await admin.refuse(id, { reason: "refused at gurt task watch" });
  printOwner(answerText(answer, { id, action }).text);
}
