/** The task broker: HTTP + JSON on tasks/<id>/broker.sock, every request of docs/broker-api.md. */
import { Hono } from "hono";
import { handleAsk } from "./ask_path.ts";
import { handleCall } from "./call_path.ts";
import type { BrokerDeps, TaskContext } from "./deps.ts";
import { ADMIN_PREFIXES, forbidPaths } from "./forbidden.ts";
import { readTaskBody } from "./task_body.ts";
import {
  errorHandler,
  HttpError,
  isDiskFull,
  parseJsonBody,
  syncDirectory,
} from "../common/mod.ts";
import { taskDir } from "../config/mod.ts";
import { chargedNanocents } from "../model-proxy/mod.ts";
import { NANOCENTS, spendRows } from "./model_spend.ts";
import { HomeSync } from "./home_sync.ts";
import { addModelRoute } from "./model_route.ts";
import { failureRefusal } from "./failure_refusal.ts";
import { rawMember } from "./raw_member.ts";
import type { TaskHandle } from "./task_handle.ts";
import { askBody, callBody, costBody, stepBody, usageBody } from "./task_schemas.ts";

/** What GET /task shows of a task. */
export function publicTask(task: TaskHandle): Record<string, unknown> {
  const { user: _user, pid: _pid, credentials, ...shown } = task.record;
  const state = task.journal.state;
  return {
    ...shown,
    // The rules by id: the placeholders are in the task's environment, not in what is shown.
    credentials: (credentials ?? []).map((given) => given.rule),
    spentCents: state.spentCents,
    spend: spendRows(state.models),
  };
}

/** The Hono app that answers one task's socket. */
export function taskRoutes(deps: BrokerDeps, task: TaskHandle): Hono {
  const app = new Hono();
  const ctx: TaskContext<BrokerDeps> = { deps, task };
  const { max_body_bytes: small, max_task_bytes: total } = deps.config.broker;
  const home = new HomeSync(`${taskDir(deps.home, task.id)}/home`, deps.syncHome);

  /** Reads a body under `limit`, drawing on the task's total since the core started. */
  function body(request: Request, limit: number): Promise<Uint8Array> {
    return readTaskBody(request, { task, limit, total });
  }

  app.get("/task", (c) => c.json({ task: publicTask(task), steps: task.journal.state.steps }));
  app.get("/tools", (c) => c.json(deps.registry.list(task.record.tools)));

  app.post("/step", async (c) => {
    const step = parseJsonBody(await body(c.req.raw, small), stepBody);
    // What the task wrote is on disk before the step that says it is done.
    await home.sync().catch((error) => {
      if (isDiskFull(error)) throw error;
      throw new HttpError(
        503,
        `the task's files could not be synced to disk (${error.message}), so the step was not written; see runbook.md#task-home-sync`,
      );
    });
    await syncDirectory(task.journal.path.slice(0, task.journal.path.lastIndexOf("/")));
    await task.journal.append({
      type: "step",
      time: deps.clock().toISOString(),
      text: deps.redact(step.text),
      data: step.data ?? null,
    });
    return c.json({ ok: true });
  });

  app.post("/call", async (c) => {
    const bytes = await body(c.req.raw, total);
    const call = parseJsonBody(bytes, callBody);
    // The input's text as received, for the Decision record (parseJsonBody checked it is UTF-8).
    const raw = rawMember(new TextDecoder().decode(bytes), "input") ?? JSON.stringify(call.input);
    return c.json(await handleCall(ctx, { body: call, raw, signal: c.req.raw.signal }));
  });

  app.post("/ask", async (c) => {
    const ask = parseJsonBody(await body(c.req.raw, small), askBody);
    return c.json(await handleAsk(ctx, { body: ask, signal: c.req.raw.signal }));
  });

  app.post("/cost", async (c) => {
    const cost = parseJsonBody(await body(c.req.raw, small), costBody);
    await charge(ctx, { cents: cost.cents, what: cost.what });
    return c.json({ ok: true, cents: cost.cents });
  });

  app.post("/usage", async (c) => {
    const usage = parseJsonBody(await body(c.req.raw, small), usageBody);
    const { cacheWrite = 0, cacheRead = 0 } = usage.tokens;
    const tokens = { ...usage.tokens, cacheWrite, cacheRead };
    // The owner's rates ([models.prices]), else the table's, as the endpoint prices an answer.
    const price = chargedNanocents([usage.model], tokens, deps.config.models.prices);
    if (price.basis === "highest") {
      throw new HttpError(
        400,
        `the model ${usage.model} is not in gurt's price table nor [models.prices]; see runbook.md#model-price`,
      );
    }
    // A report is charged whole cents, its price rounded up (the model endpoint's own answers are
    // charged their exact fractions, which the task's meter adds up).
    const cents = Math.ceil(price.nanocents / NANOCENTS);
    await charge(ctx, { cents, what: usage.what ?? "model", model: usage.model });
    // Its spend by model (model_spend.ts), service "task": no hold, so no fraction is carried.
    await task.journal.append({
      type: "model.usage",
      time: deps.clock().toISOString(),
      service: "task",
      model: usage.model,
      tokens,
      nanocents: price.nanocents,
      rates: price.basis,
    });
    return c.json({ ok: true, cents });
  });

  addModelRoute(app, ctx);

  forbidPaths(app, { paths: ADMIN_PREFIXES, socket: task.socket, log: deps.log });
  // An error may quote what the task sent (an unknown field's name): the backstop applies to it too.
  app.onError(errorHandler({ log: deps.log, redact: deps.redact, refusal: failureRefusal }));
  return app;
}

/** Records a cost the task reports, or its model's usage: the audit log, then the journal. */
export async function charge(
  ctx: TaskContext<Pick<BrokerDeps, "audit" | "clock">>,
  cost: { cents: number; what: string; model?: string; hold?: string },
): Promise<void> {
  const { deps, task } = ctx;
  const { cents, what, model, hold } = cost;
  await task.ledger.exclusive(async () => {
    await deps.audit.append({ type: "cost", task: task.id, cents, what });
  });
  await task.journal.append({
    type: "cost",
    time: deps.clock().toISOString(),
    cents,
    what,
    ...(model === undefined ? {} : { model }),
    ...(hold === undefined ? {} : { hold }),
  });
}
