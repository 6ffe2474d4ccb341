/** Assertions for tests, written here because @std/assert lives on JSR, which cannot be reached. */
import { deepStrictEqual } from "node:assert";

/** Fails unless `actual` and `expected` are deeply equal. */
export function assertEquals<T>(actual: T, expected: T, message?: string): void {
  deepStrictEqual(actual, expected, message);
}

/** Fails unless `condition` is true. */
export function assert(condition: unknown, message = "assertion failed"): asserts condition {
  if (!condition) throw new Error(message);
}

/** Fails unless `text` contains `part`. */
export function assertStringIncludes(text: string, part: string, message?: string): void {
  if (!text.includes(part)) {
    throw new Error(
      message ?? `expected ${JSON.stringify(text)} to include ${JSON.stringify(part)}`,
    );
  }
}

/** Fails unless `text` does not contain `part`. */
export function assertNotIncludes(text: string, part: string, message?: string): void {
  if (text.includes(part)) {
    throw new Error(message ?? `expected text not to include ${JSON.stringify(part)}`);
  }
}

/** Fails unless `fn` throws an error of `kind` whose message includes `part`; returns the error. */
export function assertThrows<E extends Error>(
  fn: () => unknown,
  kind: new (...args: never[]) => E,
  part?: string,
): E {
  try {
    fn();
  } catch (error) {
    return thrown(error, kind, part);
  }
  throw new Error(`expected ${kind.name} to be thrown`);
}

/** Like assertThrows, for a promise. */
export async function assertRejects<E extends Error>(
  fn: () => Promise<unknown>,
  kind: new (...args: never[]) => E,
  part?: string,
): Promise<E> {
  try {
    await fn();
  } catch (error) {
    return thrown(error, kind, part);
  }
  throw new Error(`expected ${kind.name} to be thrown`);
}

/** `error` if it is a `kind` whose message includes `part`; fails otherwise. */
function thrown<E extends Error>(
  error: unknown,
  kind: new (...args: never[]) => E,
  part: string | undefined,
): E {
  if (!(error instanceof kind)) throw new Error(`expected ${kind.name}, got ${String(error)}`);
  if (part !== undefined) assertStringIncludes(error.message, part);
  return error;
}
