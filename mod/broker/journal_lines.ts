/**
 * The lines of a task's journal (tasks/<id>/journal.jsonl), one zod schema, and what a journal
 * says about its task once its lines are read: steps, spending, and the answers by key.
 */
import { z } from "zod";
import { addUsage, type ModelSpend, modelUsageLine } from "./model_spend.ts";

/** What a /call answered: `{ok, output}` or `{ok: false, error}`. */
export type CallAnswer = { ok: true; output: unknown } | { ok: false; error: string };

const callAnswer = z.union([
  z.strictObject({ ok: z.literal(true), output: z.unknown() }),
  z.strictObject({ ok: z.literal(false), error: z.string() }),
]);

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/** What an /ask was answered: yes or no, and the owner's reason for a no if they gave one. */
export interface AskAnswer {
  approved: boolean;
  reason: string | null;
}

/** The schema of one line. */
export const journalLine = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("step"),
    time: z.string(),
    text: z.string(),
    data: z.unknown(),
  }),
  z.strictObject({
    type: z.literal("tool.call"),
    time: z.string(),
    key: z.string(),
    tool: z.string(),
    input: z.unknown(),
    decision: z.number().int().nullable(),
    /** The SHA-256 of the input's canonical JSON: what the key was used for (absent in old lines). */
    input_sha256: sha256.optional(),
  }),
  z.strictObject({
    type: z.literal("tool.result"),
    time: z.string(),
    key: z.string(),
    tool: z.string(),
    answer: callAnswer,
    cost: z.number().int().min(0),
    /** The seq of the call's Result record; absent for a denial, which has none. */
    result: z.number().int().min(0).optional(),
    /** As on the tool.call line; a denial has no tool.call line, so this binds its key. */
    input_sha256: sha256.optional(),
  }),
  /**
   * A key that joined another key's call (the same tool and input, in flight at once): it answers
   * what that call's key answered, and charges nothing more.
   */
  z.strictObject({
    type: z.literal("tool.joined"),
    time: z.string(),
    key: z.string(),
    tool: z.string(),
    /** The key of the call it joined. */
    joined: z.string(),
    input_sha256: sha256,
  }),
  z.strictObject({
    type: z.literal("tool.unrecorded"),
    time: z.string(),
    key: z.string(),
    /** The Result record the voided tool.result line named, which never reached the log. */
    result: z.number().int().min(0),
  }),
  z.strictObject({
    type: z.literal("ask"),
    time: z.string(),
    key: z.string(),
    question: z.string(),
    approval: z.number().int(),
  }),
  z.strictObject({
    type: z.literal("ask.answer"),
    time: z.string(),
    key: z.string(),
    approved: z.boolean(),
    /** The owner's reason for a refusal, redacted, if they gave one. */
    reason: z.string().optional(),
  }),
  z.strictObject({
    type: z.literal("cost"),
    time: z.string(),
    cents: z.number().int().min(0),
    what: z.string(),
    model: z.string().optional(),
    /** The model request's hold this charge settles (docs/audit.md#held-model-charges). */
    hold: z.string().optional(),
  }),
  /**
   * Written and synced before a billed model request is sent: the hold, and the whole cents the
   * request may cost at most. Its cost line, or a model.settled line, settles it.
   */
  z.strictObject({
    type: z.literal("model.hold"),
    time: z.string(),
    hold: z.string(),
    service: z.string(),
    model: z.string().nullable(),
    path: z.string(),
    cents: z.number().int().min(0),
  }),
  /** A hold settled with no charge: the answer cost no whole cent yet, or was not billed. */
  z.strictObject({ type: z.literal("model.settled"), time: z.string(), hold: z.string() }),
  /** A hold's charge the audit log could not take: its cents, recovered at the next start. */
  z.strictObject({
    type: z.literal("model.owed"),
    time: z.string(),
    hold: z.string(),
    cents: z.number().int().min(0),
  }),
  /** One answer's usage: its tokens and exact price (model_spend.ts). */
  modelUsageLine,
  z.strictObject({
    type: z.literal("event"),
    time: z.string(),
    event: z.string(),
    detail: z.unknown(),
  }),
]);

/** One journal line. */
export type JournalLine = z.infer<typeof journalLine>;

/**
 * The call a key was used for: its tool and the SHA-256 of its canonical input (null for a line
 * written before the journal kept it; such a key is known by its tool only).
 */
export interface KeyUse {
  tool: string;
  inputSha256: string | null;
}

/** What a journal says about its task once read: steps, spending, and the answers by key. */
export interface JournalState {
  steps: { text: string; data: unknown }[];
  spentCents: number;
  calls: Map<string, CallAnswer>;
  /**
   * What each call key was used for, from its tool.call or tool.result line. A voided answer
   * (tool.unrecorded) leaves it: the call may have run, and only the same call may run again.
   */
  keys: Map<string, KeyUse>;
  /** For a key answered by a tool.result line naming its Result record: that seq and the cost. */
  recorded: Map<string, { result: number; cost: number }>;
  /** The keys that joined each call's key (tool.joined lines): voided with it. */
  joins: Map<string, string[]>;
  /** Each answered /ask key's answer, and the owner's reason for a refusal if they gave one. */
  asks: Map<string, AskAnswer>;
  /**
   * The model requests' holds not yet settled by a cost or model.settled line, by hold: when it
   * was written, and the cents to recover if the audit log has no record of its charge (what a
   * model.owed line said, else the most the request could cost).
   */
  holds: Map<
    string,
    { time: string; cents: number; owed: boolean; service: string; model: string | null }
  >;
  /** Lines that did not parse: a torn last line after a crash, never acknowledged. */
  skipped: number;
  /** The spend by model (model_spend.ts), from the model.usage lines. */
  models: Map<string, ModelSpend>;
  /** The exact spend of the endpoint's model.usage lines (each names its hold), billionths of a cent. */
  modelNanocents: number;
  /** The whole cents the cost lines of the model endpoint's charges (each names its hold) say. */
  modelCents: number;
}

/** The state of a journal with no lines. */
export function emptyState(): JournalState {
  return {
    steps: [],
    spentCents: 0,
    calls: new Map(),
    keys: new Map(),
    recorded: new Map(),
    joins: new Map(),
    asks: new Map(),
    holds: new Map(),
    skipped: 0,
    models: new Map(),
    modelNanocents: 0,
    modelCents: 0,
  };
}

/** The state after `text`, a journal file's content: every line that parses, in order. */
export function readState(text: string): JournalState {
  const state = emptyState();
  for (const raw of text.split("\n")) {
    if (raw === "") continue;
    let parsed: JournalLine;
    try {
      parsed = journalLine.parse(JSON.parse(raw));
    } catch {
      state.skipped++;
      continue;
    }
    apply(state, parsed);
  }
  return state;
}

/** Makes `state` reflect one more line. */
export function apply(state: JournalState, entry: JournalLine): void {
  switch (entry.type) {
    case "step":
      state.steps.push({ text: entry.text, data: entry.data });
      break;
    case "tool.call":
      useKey(state, entry.key, entry.tool, entry.input_sha256);
      break;
    case "tool.result":
      useKey(state, entry.key, entry.tool, entry.input_sha256);
      state.calls.set(entry.key, entry.answer);
      state.spentCents += entry.cost;
      if (entry.result === undefined) state.recorded.delete(entry.key);
      else state.recorded.set(entry.key, { result: entry.result, cost: entry.cost });
      break;
    case "tool.joined": {
      useKey(state, entry.key, entry.tool, entry.input_sha256);
      const answer = state.calls.get(entry.joined);
      if (answer === undefined) break;
      state.calls.set(entry.key, answer);
      state.joins.set(entry.joined, [...(state.joins.get(entry.joined) ?? []), entry.key]);
      break;
    }
    case "tool.unrecorded": {
      // Voids the answer only if it is still the one the line names, and the keys that joined it.
      const recorded = state.recorded.get(entry.key);
      if (recorded?.result !== entry.result) break;
      state.calls.delete(entry.key);
      for (const joined of state.joins.get(entry.key) ?? []) state.calls.delete(joined);
      state.joins.delete(entry.key);
      state.spentCents -= recorded.cost;
      state.recorded.delete(entry.key);
      break;
    }
    case "ask.answer":
      state.asks.set(entry.key, { approved: entry.approved, reason: entry.reason ?? null });
      break;
    case "cost":
      state.spentCents += entry.cents;
      // A model answer's charge names its hold; a task's own /cost and /usage lines never do.
      if (entry.hold !== undefined) state.modelCents += entry.cents;
      if (entry.hold !== undefined) state.holds.delete(entry.hold);
      break;
    case "model.hold":
      state.holds.set(entry.hold, {
        time: entry.time,
        cents: entry.cents,
        owed: false,
        service: entry.service,
        model: entry.model,
      });
      break;
    case "model.usage":
      addUsage(state.models, entry);
      // The endpoint's answers name their holds; a task's own /usage report (charged whole cents
      // at once) carries no fraction.
      if (entry.hold !== undefined) state.modelNanocents += entry.nanocents;
      break;
    case "model.settled":
      state.holds.delete(entry.hold);
      break;
    case "model.owed": {
      const held = state.holds.get(entry.hold);
      if (held !== undefined) {
        state.holds.set(entry.hold, { ...held, cents: entry.cents, owed: true });
      }
      break;
    }
    default:
      break;
  }
}

/** Records what `key` was used for; a line without a digest does not forget one already known. */
function useKey(state: JournalState, key: string, tool: string, digest: string | undefined): void {
  const known = state.keys.get(key);
  if (digest === undefined && known !== undefined && known.tool === tool) return;
  state.keys.set(key, { tool, inputSha256: digest ?? null });
}
