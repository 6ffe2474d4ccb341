/**
 * A local HTTPS server for http_fetch tests: a CA and a leaf certificate for good.test and
 * other.test, made with openssl at test time in a temporary directory, and a Deno server on
 * 127.0.0.1 that answers by path. Every request it receives is recorded.
 */

/** A running test HTTPS server and the CA that signed its certificate. */
export interface TlsServer {
  port: number;
  ca: string;
  /** The host and path of every request received, in order. */
  requests: string[];
  close(): Promise<void>;
}

async function openssl(dir: string, args: string[]): Promise<void> {
  const out = await new Deno.Command("openssl", { args, cwd: dir, stdout: "null", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/**
 * Starts the server on `hostname` (127.0.0.1 unless given); `handler` answers every request, after
 * it is recorded.
 */
export async function startTlsServer(
  handler: (request: Request) => Response | Promise<Response>,
  options: { hostname?: string } = {},
): Promise<TlsServer> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-tls-" });
  try {
    const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    await openssl(dir, [
      "req",
      "-x509",
      ...ec,
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
      "-days",
      "1",
      "-subj",
      "/CN=gurt test CA",
    ]);
    await openssl(dir, [
      "req",
      ...ec,
      "-keyout",
      "leaf.key",
      "-out",
      "leaf.csr",
      "-subj",
      "/CN=good.test",
    ]);
    await Deno.writeTextFile(
      `${dir}/ext`,
      "subjectAltName=DNS:good.test,DNS:other.test,DNS:near.test\nbasicConstraints=CA:FALSE\n",
    );
    await openssl(dir, [
      "x509",
      "-req",
      "-in",
      "leaf.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "leaf.pem",
      "-days",
      "1",
      "-extfile",
      "ext",
    ]);
    const ca = await Deno.readTextFile(`${dir}/ca.pem`);
    const cert = await Deno.readTextFile(`${dir}/leaf.pem`);
    const key = await Deno.readTextFile(`${dir}/leaf.key`);
    const requests: string[] = [];
    const server = Deno.serve(
      { hostname: options.hostname ?? "127.0.0.1", port: 0, cert, key, onListen: () => {} },
      (request) => {
        const url = new URL(request.url);
        requests.push(`${request.headers.get("host")?.split(":")[0]}${url.pathname}`);
        return handler(request);
      },
    );
    return {
      port: server.addr.port,
      ca,
      requests,
      async close() {
        await server.shutdown();
      },
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
