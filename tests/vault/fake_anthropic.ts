/** A local stand-in for Anthropic's API: GET /v1/models answers as Anthropic does, by key. */

/** A running fake and what it was asked. */
export interface FakeAnthropic {
  baseUrl: string;
  requests: { path: string; version: string | null; key: string | null }[];
  close(): Promise<void>;
}

/** Starts the fake; `goodKeys` are the keys it accepts. */
export function startFakeAnthropic(goodKeys: string[]): FakeAnthropic {
  const requests: FakeAnthropic["requests"] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const url = new URL(request.url);
    const key = request.headers.get("x-api-key");
    const version = request.headers.get("anthropic-version");
    requests.push({ path: url.pathname, version, key });
    if (request.method !== "GET" || url.pathname !== "/v1/models") {
      return error(404, "not_found_error", "Not found");
    }
    if (version !== "2023-06-01") {
      return error(400, "invalid_request_error", "anthropic-version: header is required");
    }
    if (key === null || !goodKeys.includes(key)) {
      return error(401, "authentication_error", "invalid x-api-key");
    }
    return Response.json({
      data: [{
        type: "model",
        id: "claude-sonnet-4-5-20250929",
        display_name: "Claude Sonnet 4.5",
        created_at: "2025-09-29T00:00:00Z",
      }],
      has_more: false,
      first_id: "claude-sonnet-4-5-20250929",
      last_id: "claude-sonnet-4-5-20250929",
    });
  });
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}`,
    requests,
    close: () => server.shutdown(),
  };
}

function error(status: number, type: string, message: string): Response {
  return Response.json(
    { type: "error", error: { type, message }, request_id: "req_011CTest" },
    { status, headers: { "request-id": "req_011CTest" } },
  );
}
