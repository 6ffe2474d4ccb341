/**
 * A real HTTPS origin on loopback for tests of a task's own HTTPS (issue 32): a test CA and a leaf
 * for a made-up host (openssl), TLS offering ALPN h2 and http/1.1, git's smart HTTP through
 * `git http-backend` as a CGI behind HTTP Basic `user:token`, and a small API that wants the token
 * as a bearer header (`/api/*`) or a query parameter (`/q/*`), plus `/echo`, `/redirect`, `/big`.
 *
 * TLS ends in a front that knows each connection's ALPN protocol and hands the plain bytes to a
 * `Deno.serve` on another loopback port; the handler finds the protocol by the front's socket, so
 * `seen` says truly whether a request came on HTTP/2 or HTTP/1.1.
 */

/** One request the origin answered, as it arrived. */
export interface SeenRequest {
  method: string;
  /** The path, without the query string. */
  path: string;
  /** The query string without `?` ("" when none). */
  query: string;
  /** The Authorization header as sent, or null. */
  authorization: string | null;
  /** The protocol the connection agreed by ALPN. */
  protocol: "HTTP/2" | "HTTP/1.1";
  /** Bytes of request body read (for a git request, counted as they stream to the CGI). */
  bodyBytes: number;
  /** The answer's status (0 until it is known). */
  status: number;
}

/** What a test asks of the origin. */
export interface HttpsOriginOptions {
  /** The name the leaf certificate is for, e.g. `git.gurt.test`. */
  host: string;
  /** The credential every git and API request must carry. */
  token: string;
  /** The Basic user name git must send (default `x-access-token`). */
  user?: string;
}

/** A running origin. */
export interface HttpsOrigin {
  host: string;
  /** The port on 127.0.0.1 where TLS is served. */
  port: number;
  /** The test CA's certificate. */
  caPem: string;
  /** A file holding `caPem`, for `GIT_SSL_CAINFO`, `curl --cacert`, `SSL_CERT_FILE`. */
  caFile: string;
  /** Every request answered, oldest first. */
  seen: SeenRequest[];
  /** Makes a bare repo with one commit on `main`, served at `/NAME.git`; returns its path. */
  bareRepo(name: string): Promise<string>;
  /** Stops the listeners, the connections and any CGI, and removes the temporary files. */
  close(): Promise<void>;
}

const REALM = 'Basic realm="gurt-test"';

/** Starts an origin for `options.host` on 127.0.0.1 at a free port. */
export async function startHttpsOrigin(options: HttpsOriginOptions): Promise<HttpsOrigin> {
  const { host, token } = options;
  const user = options.user ?? "x-access-token";
  const dir = await Deno.makeTempDir({ prefix: "gurt-origin-" });
  const repos = `${dir}/repos`;
  await Deno.mkdir(repos);
  const gitHome = `${dir}/home`;
  await Deno.mkdir(gitHome);
  const pki = await makeCertificates(dir, host);

  const seen: SeenRequest[] = [];
  const protocols = new Map<number, SeenRequest["protocol"]>();
  const children = new Set<Deno.ChildProcess>();
  const gitEnv = {
    HOME: gitHome,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  };

  const handle = async (request: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>) => {
    const protocol = protocols.get(info.remoteAddr.port);
    if (protocol === undefined) return new Response("not through the TLS front\n", { status: 421 });
    const url = new URL(request.url);
    const entry: SeenRequest = {
      method: request.method,
      path: url.pathname,
      query: url.search.slice(1),
      authorization: request.headers.get("authorization"),
      protocol,
      bodyBytes: 0,
      status: 0,
    };
    seen.push(entry);
    const response = /^\/[^/]+\.git(\/|$)/.test(url.pathname)
      ? await gitRoute(request, url, entry)
      : await apiRoute(request, url, entry);
    entry.status = response.status;
    return response;
  };

  const basic = `Basic ${btoa(`${user}:${token}`)}`;
  const gitRoute = async (request: Request, url: URL, entry: SeenRequest): Promise<Response> => {
    if (entry.authorization !== basic) {
      await request.body?.cancel();
      return new Response("credentials required\n", {
        status: 401,
        headers: { "www-authenticate": REALM },
      });
    }
    return await runCgi(request, url, entry);
  };

  const runCgi = async (request: Request, url: URL, entry: SeenRequest): Promise<Response> => {
    const env: Record<string, string> = {
      ...gitEnv,
      GIT_PROJECT_ROOT: repos,
      GIT_HTTP_EXPORT_ALL: "1",
      GATEWAY_INTERFACE: "CGI/1.1",
      SERVER_PROTOCOL: entry.protocol,
      SERVER_NAME: host,
      REQUEST_METHOD: request.method,
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: entry.query,
      REMOTE_USER: user,
      REMOTE_ADDR: "127.0.0.1",
      AUTH_TYPE: "Basic",
      CONTENT_TYPE: request.headers.get("content-type") ?? "",
    };
    const length = request.headers.get("content-length");
    if (length !== null) env.CONTENT_LENGTH = length;
    for (const [name, value] of request.headers) {
      if (["authorization", "content-type", "content-length"].includes(name)) continue;
      env[`HTTP_${name.toUpperCase().replaceAll("-", "_")}`] = value;
    }
    const child = new Deno.Command("git", {
      args: ["http-backend"],
      clearEnv: true,
      env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    children.add(child);
    child.status.finally(() => children.delete(child));
    const counted = (request.body ?? new ReadableStream()).pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, out) {
          entry.bodyBytes += chunk.byteLength;
          out.enqueue(chunk);
        },
      }),
    );
    const fed = counted.pipeTo(child.stdin).catch(() => {});
    const stderr = new Response(child.stderr).text();
    const reader = child.stdout.getReader();
    const head = await readCgiHead(reader);
    if (head === null) {
      await fed;
      const status = await child.status;
      return new Response(`git http-backend gave no headers (${status.code}): ${await stderr}`, {
        status: 502,
      });
    }
    const body = new ReadableStream<Uint8Array>({
      start(out) {
        if (head.rest.byteLength > 0) out.enqueue(head.rest);
      },
      async pull(out) {
        const { done, value } = await reader.read();
        if (done) {
          out.close();
          await Promise.all([fed, stderr, child.status]);
        } else out.enqueue(value);
      },
      async cancel() {
        await reader.cancel();
      },
    });
    return new Response(body, { status: head.status, headers: head.headers });
  };

  const apiRoute = async (request: Request, url: URL, entry: SeenRequest): Promise<Response> => {
    entry.bodyBytes = request.body === null ? 0 : (await request.arrayBuffer()).byteLength;
    const path = url.pathname;
    const ok = () => Response.json({ ok: true, method: request.method, path });
    const refused = () => Response.json({ ok: false, error: "bad credentials" }, { status: 401 });
    if (path.startsWith("/api/")) {
      const auth = entry.authorization;
      return auth === `Bearer ${token}` || auth === `token ${token}` ? ok() : refused();
    }
    if (path.startsWith("/q/")) {
      return url.searchParams.get("access_token") === token ? ok() : refused();
    }
    if (path === "/echo") {
      const auth = entry.authorization ?? "";
      return Response.json({ authorization: entry.authorization }, { headers: { "x-echo": auth } });
    }
    if (path === "/redirect") {
      const to = url.searchParams.get("to");
      if (to === null) return new Response("to= is required\n", { status: 400 });
      return new Response(null, { status: 302, headers: { location: to } });
    }
    if (path === "/big") return big(Number(url.searchParams.get("bytes") ?? "0"));
    return new Response("no such route\n", { status: 404 });
  };

  const inner = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    handle as Deno.ServeHandler<Deno.NetAddr>,
  );
  const innerPort = inner.addr.port;

  const listener = Deno.listenTls({
    hostname: "127.0.0.1",
    port: 0,
    cert: pki.leafPem,
    key: pki.leafKey,
    alpnProtocols: ["h2", "http/1.1"],
  });
  const conns = new Set<Deno.Conn>();
  const relays = new Set<Promise<void>>();
  const relay = async (tls: Deno.TlsConn) => {
    conns.add(tls);
    let plain: Deno.TcpConn | undefined;
    try {
      const { alpnProtocol } = await tls.handshake();
      plain = await Deno.connect({ hostname: "127.0.0.1", port: innerPort });
      conns.add(plain);
      const port = (plain.localAddr as Deno.NetAddr).port;
      protocols.set(port, alpnProtocol === "h2" ? "HTTP/2" : "HTTP/1.1");
      await Promise.allSettled([
        tls.readable.pipeTo(plain.writable),
        plain.readable.pipeTo(tls.writable),
      ]);
      protocols.delete(port);
    } catch {
      // A client that fails the handshake (an untrusted CA, a wrong name) simply goes away.
    } finally {
      for (const conn of [tls, plain]) {
        if (conn === undefined) continue;
        conns.delete(conn);
        try {
          conn.close();
        } catch {
          // Already closed by its stream.
        }
      }
    }
  };
  const accepting = (async () => {
    for await (const tls of listener) {
      const running = relay(tls);
      relays.add(running);
      running.finally(() => relays.delete(running));
    }
  })().catch(() => {});

  const bareRepo = async (name: string): Promise<string> => {
    const path = `${repos}/${name}.git`;
    await git(gitEnv, repos, ["init", "--quiet", "--bare", "--initial-branch=main", path]);
    await git(gitEnv, path, ["config", "http.receivepack", "true"]);
    const blob = await git(gitEnv, path, ["hash-object", "-w", "--stdin"], `# ${name}\n`);
    const tree = await git(gitEnv, path, ["mktree"], `100644 blob ${blob}\tREADME.md\n`);
    const commit = await git(gitEnv, path, ["commit-tree", tree, "-m", "first commit"]);
    await git(gitEnv, path, ["update-ref", "refs/heads/main", commit]);
    return path;
  };

  let closed: Promise<void> | undefined;
  const close = () =>
    closed ??= (async () => {
      listener.close();
      await accepting;
      for (const child of children) {
        try {
          child.kill("SIGKILL");
        } catch {
          // Already gone.
        }
      }
      await Promise.allSettled([...children].map((child) => child.status));
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // Already closed.
        }
      }
      await Promise.allSettled([...relays]);
      await inner.shutdown();
      await Deno.remove(dir, { recursive: true });
    })();

  const port = (listener.addr as Deno.NetAddr).port;
  return { host, port, caPem: pki.caPem, caFile: pki.caFile, seen, bareRepo, close };
}

/** `N` bytes of `x`, streamed in 64 KiB chunks, with its Content-Length. */
function big(bytes: number): Response {
  if (!Number.isSafeInteger(bytes) || bytes < 0) {
    return new Response("bytes= must be a whole number\n", { status: 400 });
  }
  const chunk = new Uint8Array(64 * 1024).fill(0x78);
  let left = bytes;
  const body = new ReadableStream<Uint8Array>({
    pull(out) {
      if (left === 0) return out.close();
      const n = Math.min(left, chunk.byteLength);
      left -= n;
      out.enqueue(n === chunk.byteLength ? chunk.slice() : chunk.slice(0, n));
    },
  });
  return new Response(body, {
    headers: { "content-type": "application/octet-stream", "content-length": String(bytes) },
  });
}

/** A CGI answer's status and headers, and the body bytes read with them. */
interface CgiHead {
  status: number;
  headers: Headers;
  rest: Uint8Array;
}

/** Reads a CGI program's header block (ended by a blank line, CRLF or LF); null if it ended first. */
async function readCgiHead(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<CgiHead | null> {
  let buffered = new Uint8Array(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return null;
    const joined = new Uint8Array(buffered.byteLength + value.byteLength);
    joined.set(buffered);
    joined.set(value, buffered.byteLength);
    buffered = joined;
    const end = headEnd(buffered);
    if (end === null) {
      if (buffered.byteLength > 64 * 1024) return null;
      continue;
    }
    const text = new TextDecoder().decode(buffered.subarray(0, end.at));
    const headers = new Headers();
    let status = 200;
    for (const line of text.split(/\r?\n/)) {
      const colon = line.indexOf(":");
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
      else headers.append(name, value);
    }
    return { status, headers, rest: buffered.slice(end.at + end.length) };
  }
}

/** Where the first blank line is: its offset and the length of the ending. */
function headEnd(bytes: Uint8Array): { at: number; length: number } | null {
  for (let i = 0; i + 1 < bytes.byteLength; i++) {
    if (bytes[i] !== 0x0a) continue;
    if (bytes[i + 1] === 0x0a) return { at: i, length: 2 };
    if (bytes[i + 1] === 0x0d && bytes[i + 2] === 0x0a) return { at: i, length: 3 };
  }
  return null;
}

/** Runs git in `cwd` with `input` on stdin; its trimmed stdout, or an error with its stderr. */
async function git(
  env: Record<string, string>,
  cwd: string,
  args: string[],
  input = "",
): Promise<string> {
  const child = new Deno.Command("git", {
    args,
    cwd,
    clearEnv: true,
    env: {
      ...env,
      GIT_AUTHOR_NAME: "Origin",
      GIT_AUTHOR_EMAIL: "origin@gurt.test",
      GIT_COMMITTER_NAME: "Origin",
      GIT_COMMITTER_EMAIL: "origin@gurt.test",
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const out = await child.output();
  const decoder = new TextDecoder();
  if (!out.success) throw new Error(`git ${args[0]} failed: ${decoder.decode(out.stderr)}`);
  return decoder.decode(out.stdout).trim();
}

/** The test CA and the leaf for `host`, made by openssl in `dir`. */
interface Certificates {
  caPem: string;
  caFile: string;
  leafPem: string;
  leafKey: string;
}

async function makeCertificates(dir: string, host: string): Promise<Certificates> {
  if (!/^[a-z0-9.-]+$/i.test(host)) throw new Error(`not a host name: ${host}`);
  const pki = `${dir}/pki`;
  await Deno.mkdir(pki);
  await Deno.writeTextFile(
    `${pki}/leaf.ext`,
    [
      "basicConstraints=critical,CA:FALSE",
      "keyUsage=critical,digitalSignature",
      "extendedKeyUsage=serverAuth",
      `subjectAltName=DNS:${host}`,
      "",
    ].join("\n"),
  );
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  await openssl(pki, [
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=gurt test CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  await openssl(pki, [
    "req",
    ...ec,
    "-keyout",
    "leaf.key",
    "-out",
    "leaf.csr",
    "-subj",
    `/CN=${host}`,
  ]);
  await openssl(pki, [
    "x509",
    "-req",
    "-in",
    "leaf.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-set_serial",
    "0x" + crypto.randomUUID().replaceAll("-", "").slice(0, 16),
    "-days",
    "2",
    "-extfile",
    "leaf.ext",
    "-out",
    "leaf.pem",
  ]);
  return {
    caPem: await Deno.readTextFile(`${pki}/ca.pem`),
    caFile: `${pki}/ca.pem`,
    leafPem: await Deno.readTextFile(`${pki}/leaf.pem`),
    leafKey: await Deno.readTextFile(`${pki}/leaf.key`),
  };
}

async function openssl(cwd: string, args: string[]): Promise<void> {
  const out = await new Deno.Command("openssl", { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}
