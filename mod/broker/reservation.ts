/**
 * The cents one call holds against its task's budget: from the moment it may run (allowed, or
 * approved) until its tool.result line has charged them, or never will. While held, the task's
 * other calls are decided with them (TaskHandle.committedCents), so calls running side by side
 * never pass the budget between them.
 */
import type { TaskHandle } from "./task_handle.ts";

/** A call's reservation: taken once, released once, in the call's `finally`. */
export class Reservation {
  #cents = 0;
  #taken = false;

  constructor(readonly task: TaskHandle) {}

  /** Holds `cents` for the call; a call takes its reservation once. */
  take(cents: number): void {
    if (this.#taken) throw new Error("a call's reservation was taken twice");
    this.#taken = true;
    this.#cents = cents;
    this.task.reservedCents += cents;
  }

  /** Gives the cents back: after the line that charges them was applied, or will never be. */
  release(): void {
    this.task.reservedCents -= this.#cents;
    this.#cents = 0;
  }
}
