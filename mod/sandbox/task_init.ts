/**
 * The task init (task_init.c, built by tools/build_task_init.sh): a 3 KB static x86-64 Linux
 * program, the pid 1 of a task's sandbox. It listens on 127.0.0.1:PORT for each door and relays
 * each connection to the door's Unix socket, runs the worker, reaps the namespace's orphans, and
 * exits with the worker's status: `init PORT SOCKET ... -- PROGRAM ARG...`.
 */
import { TASK_INIT_ELF_BASE64 } from "./task_init_elf.ts";

/** The task init's bytes. */
export function taskInitElf(): Uint8Array {
  return Uint8Array.from(atob(TASK_INIT_ELF_BASE64), (char) => char.charCodeAt(0));
}
