/** Login codes and sessions against a clock the test moves: expiry, restarts, other tokens. */
import { assert, assertEquals } from "../assert.ts";
import { CODE_TTL_MS, loginCode, SESSION_TTL_MS, SessionStore } from "../../mod/portal/mod.ts";

const TOKEN = "a".repeat(64);
const START = Date.parse("2026-11-29T12:00:00.000Z");

function storeAt(now: { ms: number }): SessionStore {
  return new SessionStore(TOKEN, { startedAt: START, clock: () => new Date(now.ms) });
}

Deno.test("a login code expires CODE_TTL_MS after it was made", () => {
  const now = { ms: START + 1000 };
  const store = storeAt(now);
  const fresh = loginCode(TOKEN, new Date(now.ms));
  const old = loginCode(TOKEN, new Date(now.ms));
  now.ms += CODE_TTL_MS - 1;
  assert(typeof store.login(fresh) !== "string", "a code just inside its time was refused");
  now.ms += 2;
  assertEquals(store.login(old), "expired");
});

Deno.test("a code made before this portal started is refused as expired", () => {
  const now = { ms: START + 1000 };
  const store = storeAt(now);
  assertEquals(store.login(loginCode(TOKEN, new Date(START - 60_000))), "expired");
});

Deno.test("a code made with another token, or altered, is not a code", () => {
  const now = { ms: START + 1000 };
  const store = storeAt(now);
  assertEquals(store.login(loginCode("b".repeat(64), new Date(now.ms))), "not_a_code");
  const code = loginCode(TOKEN, new Date(now.ms));
  const altered = code.slice(0, -1) + (code.endsWith("0") ? "1" : "0");
  assertEquals(store.login(altered), "not_a_code");
  assertEquals(store.login("garbage"), "not_a_code");
  assertEquals(store.login(loginCode(TOKEN, new Date(now.ms + 60_000))), "not_a_code");
});

Deno.test("a session ends SESSION_TTL_MS after it opened, or when ended", () => {
  const now = { ms: START + 1000 };
  const store = storeAt(now);
  const session = store.login(loginCode(TOKEN, new Date(now.ms)));
  if (typeof session === "string") throw new Error(`refused: ${session}`);
  const other = store.open();
  now.ms += SESSION_TTL_MS - 1;
  assertEquals(store.get(session.id)?.csrf, session.csrf);
  store.end(other.id);
  assertEquals(store.get(other.id), undefined);
  now.ms += 1;
  assertEquals(store.get(session.id), undefined);
  assertEquals(store.get(undefined), undefined);
});
