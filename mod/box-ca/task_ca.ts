/**
 * A task's own CA, for the hosts of its credential rules (mod/credentials): made in memory when the
 * task's worker starts, its key never written anywhere, its name constraints permitting exactly
 * those hosts (and no IP address). The task trusts it beside the box CA (BoxCa.bundleWith); no
 * other task does, so one task's interception can never answer for another's hosts, and a rule
 * given to no task is answered by no CA at all. It ends with the task (or the core): nothing of it
 * outlives the process.
 */
import { BoxCaError } from "./box_ca_error.ts";
import { type Leaf, LeafCache } from "./box_ca.ts";
import { makeCa } from "./certificates.ts";

/** A task's CA: its certificate (PEM), the hosts it may sign, and their leaves. */
export interface TaskCa {
  readonly caPem: string;
  readonly hosts: readonly string[];
  /** The leaf of one of `hosts`, minted on first use and cached; throws for any other name. */
  leaf(host: string): Promise<Leaf>;
}

/** Makes the CA of a task whose credential rules name `hosts` (at least one; duplicates merge). */
export async function makeTaskCa(
  hosts: readonly string[],
  options: { clock?: () => Date } = {},
): Promise<TaskCa> {
  const names = [...new Set(hosts)].sort();
  if (names.length === 0) throw new BoxCaError("a task CA needs at least one host");
  const clock = options.clock ?? (() => new Date());
  // A year is more than any task runs; the leaves are re-minted within a day of their 30-day end.
  const made = await makeCa(names, clock(), { name: "gurt task CA", years: 1 });
  const leaves = new LeafCache(made.signer, clock);
  const permitted = new Set(names);
  return Object.freeze({
    caPem: made.pair.certPem,
    hosts: Object.freeze(names),
    leaf(host: string): Promise<Leaf> {
      if (!permitted.has(host)) {
        return Promise.reject(
          new BoxCaError(
            `${JSON.stringify(host)} is not one of this task's credential hosts ` +
              `(${names.join(", ")}); its CA signs no other name`,
          ),
        );
      }
      return leaves.leaf(host);
    },
  });
}
