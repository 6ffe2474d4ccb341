/**
 * What the proxy answers when it refuses: a 403 (a 400 for a request it does not take) whose plain
 * body says, in a sentence, why the host cannot be reached and that retrying will not help, with a
 * runbook pointer. Pure.
 */
import type { BlockReason } from "./host_policy.ts";

/** The sentence that tells a client (and the model reading its error) why `target` was refused. */
export function refusalText(reason: BlockReason, target: string): string {
  const end = "retrying will not help";
  switch (reason) {
    case "not_listed":
      return `gurt egress: ${target} is not on this task's host list; ${end}. Ask the owner to add it (gurt task start --hosts). see runbook.md#egress-blocked`;
    case "ip_literal":
      return `gurt egress: ${target} is an IP address, or a spelling of one, that is not on this task's host list; ${end}. Use the host's name, and ask the owner to add it (gurt task start --hosts). see runbook.md#egress-blocked`;
    case "private_address":
      return `gurt egress: ${target} is not on this task's host list as a private host: it resolves to a loopback, private, link-local or metadata address, which the proxy does not reach; ${end}. see runbook.md#egress-blocked`;
    case "own_address":
      return `gurt egress: ${target} is not on this task's host list as a private host: it resolves to an address of this box, which the proxy does not reach; ${end}. see runbook.md#egress-blocked`;
    case "host_mismatch":
      return `gurt egress: the request's Host header names another host than its target ${target} (its URL's, or its tunnel's), and only the target is on this task's host list; ${end}. see runbook.md#egress-blocked`;
    case "resolve_failed":
      return `gurt egress: ${target} is on this task's host list but the box could not resolve it to an address; retrying will not help until its DNS answers. see runbook.md#egress-blocked`;
    case "bad_request":
      return `gurt egress: the request is not one the proxy takes (CONNECT host:port, an absolute http:// URL, SOCKS5 without authentication, or one origin-form request in a tunnel; with one Host header, one framing (no Transfer-Encoding in HTTP/1.0), a Connection header that names none of Host, Content-Length and Transfer-Encoding, and lines ended by CRLF alone, holding no other CR or LF, no NUL and no fold), so no host on this task's list was reached; ${end}. see runbook.md#egress-blocked`;
    case "sni_mismatch":
    case "no_sni":
      return `gurt egress: the TLS in the tunnel to ${target} does not name ${target} alone, so the proxy closed it; ${end}. see runbook.md#egress-blocked`;
    case "credential_plain_http":
      return `gurt egress: the request to ${target} carries one of this task's credential placeholders over plain HTTP, where anyone on the way could read it; the box puts a credential only on HTTPS, so nothing was sent; ${end}. Use https://. see docs/credentials.md#plain-http`;
    case "not_tls":
      return `gurt egress: the tunnel to ${target} started with neither TLS nor (off port 443) one plain HTTP request, the only things a tunnel carries, so the proxy closed it; ${end}. see runbook.md#egress-blocked`;
  }
}

/**
 * A complete HTTP/1.1 answer with a plain-text body, that closes the connection; `headers` are
 * added to its head.
 */
export function plainAnswer(
  status: string,
  content: { text: string; headers?: string[] },
): Uint8Array {
  const { text, headers: extra = [] } = content;
  const body = new TextEncoder().encode(`${text}\n`);
  const head = [
    `HTTP/1.1 ${status}`,
    "Content-Type: text/plain; charset=utf-8",
    `Content-Length: ${body.length}`,
    "Connection: close",
    ...extra,
    "",
    "",
  ].join("\r\n");
  const bytes = new TextEncoder().encode(head);
  const answer = new Uint8Array(bytes.length + body.length);
  answer.set(bytes);
  answer.set(body, bytes.length);
  return answer;
}

/** The answer to a refusal of `target` for `reason`: 400 for a request the proxy cannot take, else 403. */
export function refusalAnswer(reason: BlockReason, target: string): Uint8Array {
  return plainAnswer(reason === "bad_request" ? "400 Bad Request" : "403 Forbidden", {
    text: refusalText(reason, target),
    headers: [`X-Gurt-Egress: blocked; reason=${reason}`],
  });
}
