/**
 * The CLI role's side of `gurt task watch ID` (docs/threat-model.md#the-owners-view): follows the
 * task's journal over the admin socket and prints it. On `approval_pending` it fetches the pending
 * entry from the core (never from the event), prints the block of `gurt approvals`, and asks `type
 * 41 to approve, n to refuse`: only exactly the id approves, only `n` (`no`, `refuse`) or the end of
 * the input refuses, and any other line (a stray Enter) asks again. `--say` shows and does not ask;
 * `--json` prints the journal's lines as JSON and contacts nothing else.
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
  const action = await answerOf(id, stdin);
  const answer = action === "approve"
    ? await admin.approve(id)
    : await admin.refuse(id, { reason: "refused at gurt task watch" });
  printOwner(answerText(answer, { id, action }).text);
}

/** The words that refuse, as typed (any case, spaces around them ignored). */
const REFUSALS = new Set(["n", "no", "refuse"]);

/**
 * Asks until the owner answers: the id approves, a refusal word or the end of the input refuses.
 * Any other line asks again, and lines that came with it are dropped: they were typed before the
 * question was asked again, so they answer nothing.
 */
async function answerOf(id: number, stdin: LineReader): Promise<"approve" | "refuse"> {
  let question = `type ${id} to approve, n to refuse`;
  for (;;) {
    await Deno.stderr.write(new TextEncoder().encode(`${question}\n`));
    const typed = await stdin.readLine();
    if (typed === null) {
      printOwner(`end of input: refusing ${id}`);
      return "refuse";
    }
    const word = typed.trim();
    if (word === String(id)) return "approve";
    if (REFUSALS.has(word.toLowerCase())) return "refuse";
    stdin.dropWaiting();
    question =
      `${word === "" ? "an empty line" : "that"} answers nothing: type ${id} to approve, ` +
      `n to refuse`;
  }
}
