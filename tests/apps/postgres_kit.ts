/**
 * A throwaway PostgreSQL cluster for the apps' tests: Debian's PostgreSQL 15 (install.sh --test),
 * initdb'd and run as `nobody` (postgres refuses root) in a temporary folder, listening on
 * 127.0.0.1 at a free port, with scram-sha-256 password auth for one user whose password the
 * caller gives (written to a 0600 file for initdb, never put in an argv).
 */
const BIN = "/usr/lib/postgresql/15/bin";
const NOBODY = 65534;
const NOGROUP = 65534;

/** Whether Debian's PostgreSQL 15 is installed. */
export const havePostgres = await Deno.stat(`${BIN}/postgres`).then(() => true, () => false);

/** A running cluster. */
export interface Cluster {
  port: number;
  user: string;
  /** Runs SQL through psql as the cluster's user (the password through PGPASSWORD). */
  sql(text: string): Promise<string>;
  close(): Promise<void>;
}

function asNobody(program: string, args: string[], env: Record<string, string> = {}) {
  return new Deno.Command("/usr/bin/setpriv", {
    args: [`--reuid=${NOBODY}`, `--regid=${NOGROUP}`, "--clear-groups", "--", program, ...args],
    env: { PATH: "/usr/bin:/bin", LANG: "C.UTF-8", ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

async function run(program: string, args: string[], env?: Record<string, string>) {
  const out = await asNobody(program, args, env).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`${program} failed: ${text}${new TextDecoder().decode(out.stderr)}`);
  }
  return text;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Makes and starts a cluster with `user` and `password`. */
export async function startCluster(user: string, password: string): Promise<Cluster> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-pg-" });
  await Deno.chmod(dir, 0o700);
  await Deno.chown(dir, NOBODY, NOGROUP);
  const pwfile = `${dir}/pw`;
  await Deno.writeTextFile(pwfile, `${password}\n`, { mode: 0o600 });
  await Deno.chown(pwfile, NOBODY, NOGROUP);
  await run(`${BIN}/initdb`, [
    "-D",
    `${dir}/data`,
    "-U",
    user,
    "--auth=scram-sha-256",
    `--pwfile=${pwfile}`,
    "--no-sync",
    "-E",
    "UTF8",
  ]);
  await Deno.remove(pwfile);
  const port = freePort();
  const server = asNobody(`${BIN}/postgres`, [
    "-D",
    `${dir}/data`,
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    `unix_socket_directories=${dir}`,
    "-c",
    "fsync=off",
    "-p",
    String(port),
  ]).spawn();
  // Drained, so a chatty log never blocks the server.
  const logs = Promise.all([server.stdout.pipeTo(new WritableStream()), server.stderr.text()]);
  const cluster: Cluster = {
    port,
    user,
    sql: (text) =>
      run(`${BIN}/psql`, [
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-U",
        user,
        "-d",
        "postgres",
        "-v",
        "ON_ERROR_STOP=1",
        "-At",
        "-c",
        text,
      ], { PGPASSWORD: password }),
    async close() {
      try {
        server.kill("SIGINT");
      } catch {
        // Already ended.
      }
      await server.status;
      await logs.catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
  for (let i = 0;; i++) {
    const ready = await asNobody(`${BIN}/pg_isready`, ["-h", "127.0.0.1", "-p", String(port)])
      .output();
    if (ready.success) break;
    if (i >= 300) {
      await cluster.close();
      throw new Error(`postgres did not start: ${(await logs)[1]}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return cluster;
}
