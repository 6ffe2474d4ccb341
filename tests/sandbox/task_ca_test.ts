/**
 * The box CA inside a task (issue 19): the bundle of the box CA and the system roots, root-only on
 * the host, reaches the task's sandbox as a read-only copy at CA_BUNDLE_PATH through a descriptor
 * the first stage opens as root; the task's worker is told to trust it (caEnv), and nothing else
 * of the CA (its folder, its key) is in the task's reach. As root, with real bubblewrap.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { openBoxCa } from "../../mod/box-ca/mod.ts";
import { CA_BUNDLE_PATH, caEnv } from "../../mod/sandbox/mod.ts";
import { spawnWorker } from "../../mod/core/worker_process.ts";
import type { TaskRecord } from "../../mod/broker/mod.ts";
import { until } from "../kit/mod.ts";
import { runInBox, type SandboxBox, withSandboxBox } from "./sandbox_kit.ts";

const USER = { uid: 61236, gid: 61236 };

/** The variables that name the bundle, as every common TLS client reads one. */
const CA_VARIABLES = [
  "CURL_CA_BUNDLE",
  "DENO_CERT",
  "GIT_SSL_CAINFO",
  "NODE_EXTRA_CA_CERTS",
  "REQUESTS_CA_BUNDLE",
  "SSL_CERT_FILE",
];

/** A Unix socket in the box, owned by the task's user (as the core's doors are); close it after. */
async function listenAt(box: SandboxBox, name: string): Promise<Deno.Listener> {
  const path = `${box.dir}/${name}`;
  const listener = Deno.listen({ transport: "unix", path });
  await Deno.chown(path, box.user.uid, box.user.gid);
  return listener;
}

Deno.test("caEnv names CA_BUNDLE_PATH in each of the six variables TLS clients read", () => {
  assertEquals(CA_BUNDLE_PATH, "/.gurt/ca.pem");
  const env = caEnv();
  assertEquals(Object.keys(env).sort(), CA_VARIABLES);
  for (const name of CA_VARIABLES) assertEquals(env[name], CA_BUNDLE_PATH, name);
});

Deno.test("a task given the bundle reads its bytes at /.gurt/ca.pem, cannot change it, and holds no descriptor more than without", async () => {
  await withSandboxBox(USER, async (box) => {
    const ca = await openBoxCa(`${box.dir}/ca`);
    const door = await listenAt(box, "door.sock");
    const script = `cp /.gurt/ca.pem "$HOME/seen.pem" 2>/dev/null && echo copied
      [ -e /.gurt/ca.pem ] && stat -c 'mode %a' /.gurt/ca.pem
      echo x 2>/dev/null >> /.gurt/ca.pem && echo appended
      echo x 2>/dev/null > /.gurt/ca.pem && echo overwritten
      chmod 0666 /.gurt/ca.pem 2>/dev/null && echo chmodded
      rm /.gurt/ca.pem 2>/dev/null && echo removed
      echo "gurt:" $(ls -A /.gurt)
      cd /proc/$$/fd && echo "fds:" *`;
    try {
      const given = await runInBox(box, script, {
        doors: [{ port: 3128, socket: `${box.dir}/door.sock` }],
        caBundle: ca.bundlePath,
      });
      assertEquals(given.code, 0, given.err);
      const lines = given.out.trim().split("\n");
      assertEquals(lines.slice(0, 3), ["copied", "mode 444", "gurt: ca.pem doors init"], given.err);
      assertEquals(
        await Deno.readFile(`${box.home}/seen.pem`),
        await Deno.readFile(ca.bundlePath),
        "the task reads the bundle's bytes",
      );
      await Deno.remove(`${box.home}/seen.pem`);
      const without = await runInBox(box, script, {
        doors: [{ port: 3128, socket: `${box.dir}/door.sock` }],
      });
      const rest = without.out.trim().split("\n");
      assertEquals(rest.slice(0, 1), ["gurt: doors init"], without.err);
      assertEquals(lines[3], rest[1], "the same descriptors, with the bundle and without");
      assert(
        !lines[3].split(" ").includes("8"),
        `the bundle's descriptor stayed open: ${lines[3]}`,
      );
    } finally {
      door.close();
    }
  });
});

Deno.test("the CA's folder, its key and the bundle's host path are out of a task's reach", async () => {
  await withSandboxBox(USER, async (box) => {
    // The box home's ca/ beside the task's folder, as BOX_HOME/ca is beside BOX_HOME/tasks.
    const ca = await openBoxCa(`${box.dir}/ca`);
    const keyLines = (await Deno.readTextFile(`${box.dir}/ca/ca.key`)).split("\n")
      .filter((line) => line.length > 0 && !line.startsWith("-----"));
    assert(keyLines.length > 0, "the CA key has a body");
    const bundle = await Deno.readTextFile(ca.bundlePath);
    assert(keyLines.every((line) => !bundle.includes(line)), "the bundle holds no line of the key");
    await Deno.writeTextFile(`${box.dir}/key-lines`, keyLines.join("\n") + "\n");
    await Deno.chmod(`${box.dir}/key-lines`, 0o644);
    const run = await runInBox(
      box,
      `echo "folder:" $(ls -A ${box.dir})
       for p in ${box.dir}/ca ${box.dir}/ca/ca.key ${ca.bundlePath} ${box.dir}/key-lines; do
         [ -e "$p" ] && echo "seen $p"
       done
       # Each line of the key, looked for in every file the task may read outside /proc and /sys.
       printf '%s\\n' ${keyLines.map((line) => `'${line}'`).join(" ")} > /tmp/lines
       grep -rlF -D skip -f /tmp/lines / --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr \\
         --exclude-dir=lib --exclude-dir=lib64 --exclude-dir=bin --exclude-dir=sbin 2>/dev/null \\
         | grep -v '^/tmp/lines$'
       echo done`,
      { caBundle: ca.bundlePath },
    );
    assertEquals(run.out.trim().split("\n"), ["folder: home", "done"], run.err);
  });
});

Deno.test("a task's worker gets the six variables and the file with a bundle, and neither without", async () => {
  await withSandboxBox(USER, async (box) => {
    const ca = await openBoxCa(`${box.dir}/ca`);
    const broker = await listenAt(box, "broker.sock");
    const script = `env | grep -E '^(${CA_VARIABLES.join("|")})=' | sort
      [ -e /.gurt/ca.pem ] && echo file-there
      echo end-of-output`;
    const record: TaskRecord = {
      id: box.task,
      prompt: "",
      worker: { kind: "cmd", command: ["/bin/sh", "-c", script] },
      tools: [],
      budgetCents: null,
      state: "running",
      created: new Date().toISOString(),
      ended: null,
      endReason: null,
      user: null,
      pid: null,
      hosts: [],
    };
    const places = {
      socket: box.socket,
      dir: box.dir,
      user: { name: `box-${box.task}`, ...box.user },
      logBytes: 1024 * 1024,
      sandboxes: box.sandboxes,
      egress: null,
      model: null,
    };
    const log = `${box.dir}/worker.log`;
    async function output(caBundle: string | null): Promise<string[]> {
      await Deno.remove(log).catch(() => {});
      const child = await spawnWorker(record, { ...places, caBundle });
      assert(child !== null);
      assertEquals((await child.status).code, 0);
      await until(async () => (await Deno.readTextFile(log)).includes("end-of-output"));
      return (await Deno.readTextFile(log)).trim().split("\n");
    }
    try {
      assertEquals(await output(ca.bundlePath), [
        ...CA_VARIABLES.map((name) => `${name}=/.gurt/ca.pem`),
        "file-there",
        "end-of-output",
      ]);
      assertEquals(await output(null), ["end-of-output"]);
    } finally {
      broker.close();
    }
  });
});

Deno.test("curl and Python in a task trust a leaf the box CA minted by the variables alone, and not without them", async () => {
  await withSandboxBox(USER, async (box) => {
    const ca = await openBoxCa(`${box.dir}/ca`);
    const leaf = await ca.leaf("api.anthropic.com");
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, cert: leaf.certPem, key: leaf.keyPem, onListen: () => {} },
      () => new Response("answered by the box's leaf"),
    );
    // The task reaches the TLS server through a door: 127.0.0.1:4443 inside, relayed to this Unix
    // socket, relayed here to the server's port.
    const door = await listenAt(box, "tls.sock");
    const relays: Promise<void>[] = [];
    const relaying = (async () => {
      for await (const conn of door) {
        relays.push((async () => {
          const tcp = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
          await Promise.all([
            conn.readable.pipeTo(tcp.writable).catch(() => {}),
            tcp.readable.pipeTo(conn.writable).catch(() => {}),
          ]);
        })());
      }
    })();
    const url = "https://api.anthropic.com:4443/v1/messages";
    const curl = `curl -sS --noproxy '*' --resolve api.anthropic.com:4443:127.0.0.1 ${url}`;
    // Python's default context reads SSL_CERT_FILE (through OpenSSL's default paths).
    await Deno.writeTextFile(
      `${box.home}/tls.py`,
      `import socket, ssl
try:
    ctx = ssl.create_default_context()
    raw = socket.create_connection(("127.0.0.1", 4443))
    tls = ctx.wrap_socket(raw, server_hostname="api.anthropic.com")
    tls.sendall(b"GET /v1/messages HTTP/1.1\\r\\nHost: api.anthropic.com\\r\\nConnection: close\\r\\n\\r\\n")
    answer = b""
    while chunk := tls.recv(65536):
        answer += chunk
    print("python", answer.split(b"\\r\\n\\r\\n", 1)[1].decode())
except ssl.SSLCertVerificationError as error:
    print("python refused", error.verify_message)
`,
    );
    await Deno.chmod(`${box.home}/tls.py`, 0o644);
    const python = 'python3 "$HOME/tls.py"';
    try {
      const run = await runInBox(
        box,
        `${curl}; echo " curl $?"
         ${python}
         env -u CURL_CA_BUNDLE -u SSL_CERT_FILE ${curl} 2>/dev/null; echo "bare curl $?"
         env -u SSL_CERT_FILE ${python}`,
        {
          doors: [{ port: 4443, socket: `${box.dir}/tls.sock` }],
          caBundle: ca.bundlePath,
          env: caEnv(),
        },
      );
      assertEquals(run.out.trim().split("\n"), [
        "answered by the box's leaf curl 0",
        "python answered by the box's leaf",
        "bare curl 60",
        "python refused unable to get local issuer certificate",
      ], run.err);
    } finally {
      door.close();
      await relaying;
      await Promise.all(relays);
      await server.shutdown();
    }
  });
});

Deno.test("a bundle the first stage cannot open fails the sandbox, saying which, before anything runs", async () => {
  await withSandboxBox(USER, async (box) => {
    const missing = `${box.dir}/ca/bundle.pem`;
    const run = await runInBox(box, `echo ran > "$HOME/ran"`, { caBundle: missing });
    assertEquals(run.code, 125, run.err);
    assertStringIncludes(
      run.err,
      `gurt-task-sandbox: cannot open the box CA bundle ${missing}; see runbook.md#task-sandbox-failed`,
    );
    assert(!(await Deno.stat(`${box.home}/ran`).then(() => true, () => false)), "the worker ran");
  });
});
