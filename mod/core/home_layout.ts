/** The box home's folders, created with their modes on first start (design.md, "The box home"). */

/** Creates every folder the core needs; the owner's socket folder is 0700 whether made or found. */
export async function ensureHomeLayout(
  home: string,
  options: { taskUsers?: boolean } = {},
): Promise<void> {
  await Deno.mkdir(home, { recursive: true, mode: 0o711 });
  if (options.taskUsers === true) {
    // Each task's user must pass through the home to its own socket and folder; a home found at
    // 0700 would keep every worker from starting (its working folder is under tasks/<id>/).
    const found = (await Deno.stat(home)).mode! & 0o777;
    if ((found & 0o001) === 0) await Deno.chmod(home, found | 0o001);
  }
  for (const dir of ["grants", "audit", "broker/sessions", "tasks"]) {
    await Deno.mkdir(`${home}/${dir}`, { recursive: true, mode: 0o700 });
  }
  // Task users must reach their own socket under tasks/<id>/, so tasks/ can be traversed.
  await Deno.chmod(`${home}/tasks`, 0o711);
  const run = `${home}/run/owner-broker`;
  await Deno.mkdir(run, { recursive: true, mode: 0o700 });
  try {
    await Deno.chmod(run, 0o700);
  } catch (error) {
    throw new Error(
      `cannot make ${run} private (mode 0700): ${
        (error as Error).message
      }; see runbook.md#home-unusable`,
    );
  }
}

/** Removes a socket file left by a core that is gone. Call only while holding the audit lock. */
export async function removeStaleSocket(path: string): Promise<void> {
  try {
    const info = await Deno.lstat(path);
    if (!info.isSocket) {
      throw new Error(`${path} exists and is not a socket; see runbook.md#home-unusable`);
    }
    await Deno.remove(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/** Serves `handler` on a Unix socket at `path`, mode 0600, bound inside a private folder. */
export async function serveSocket(
  path: string,
  handler: (request: Request) => Response | Promise<Response>,
): Promise<Deno.HttpServer> {
  await removeStaleSocket(path);
  const { promise, resolve } = Promise.withResolvers<void>();
  const server = Deno.serve({ path, onListen: () => resolve() }, handler);
  await promise;
  await Deno.chmod(path, 0o600);
  return server;
}
