/**
 * docs/credentials.md#how-a-request-is-read: each placement found and applied, and the requests
 * where a placeholder must not count (another host, another port, another header, the path only,
 * garbled Basic, two of one header), which are stray or carry nothing.
 */
import {
  applyCredential,
  type CredentialRequest,
  type CredentialRule,
  findCredential,
  newPlaceholder,
  type OfferedCredential,
  parseCredentialRule,
} from "../../mod/credentials/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";

function rule(id: string, content: string): CredentialRule {
  const parsed = parseCredentialRule({ file: `credentials/${id}.toml`, content });
  assert(parsed.ok, JSON.stringify(parsed));
  return parsed.rule;
}

function offer(r: CredentialRule): OfferedCredential {
  return { rule: r, placeholder: newPlaceholder(r.id) };
}

const BEARER = offer(rule(
  "gh-api",
  'host = "api.github.com"\nsecret = "GH"\nheader = "Authorization: Bearer {}"\n',
));
const BASIC = offer(rule(
  "github",
  'host = "github.com"\nsecret = "GH"\nbasic = { user = "x-access-token" }\ngit = true\n',
));
const QUERY = offer(rule(
  "maps",
  'host = "maps.example.com"\nport = 8443\nsecret = "MAPS_KEY"\nquery = "key"\n',
));
const OFFERED = [BEARER, BASIC, QUERY];
const VALUE = "ghp_0123456789abcdefVALUE";

function request(url: string, headers: Record<string, string> | [string, string][] = {}) {
  return { method: "GET", url, headers: new Headers(headers) } satisfies CredentialRequest;
}

function basic(user: string, password: string): string {
  return `Basic ${btoa(`${user}:${password}`)}`;
}

const API = { host: "api.github.com", port: 443 };
const GIT = { host: "github.com", port: 443 };
const MAPS = { host: "maps.example.com", port: 8443 };

Deno.test("a placeholder is gurt's prefix, the rule id and 32 lower-case hex, fresh each time", () => {
  const one = newPlaceholder("github");
  assert(/^gurt-credential-github-[0-9a-f]{32}$/.test(one), one);
  assert(one !== newPlaceholder("github"));
  assertEquals(encodeURIComponent(one), one);
});

Deno.test("a Bearer header with the placeholder is found and set to the rule's format", () => {
  const req = request("/user", { authorization: `Bearer ${BEARER.placeholder}`, accept: "*/*" });
  const finding = findCredential(req, { target: API, offered: OFFERED });
  assertEquals(finding, { credential: BEARER, stray: false });
  const applied = applyCredential(req, {
    target: API,
    offered: OFFERED,
    credential: BEARER,
    value: VALUE,
  });
  assertEquals(applied.headers.get("authorization"), `Bearer ${VALUE}`);
  assertEquals(applied.headers.get("accept"), "*/*");
  assertEquals(applied.url, "/user");
  assertEquals(req.headers.get("authorization"), `Bearer ${BEARER.placeholder}`);
});

Deno.test("gh's `Authorization: token PH` counts and becomes the format's `Bearer VALUE`", () => {
  const req = request("/repos/a/b/pulls", { Authorization: `token ${BEARER.placeholder}` });
  const finding = findCredential(req, { target: API, offered: OFFERED });
  assertEquals(finding.credential, BEARER);
  const applied = applyCredential(req, {
    target: API,
    offered: OFFERED,
    credential: BEARER,
    value: VALUE,
  });
  assertEquals(applied.headers.get("authorization"), `Bearer ${VALUE}`);
  assertEquals([...applied.headers.keys()], ["authorization"]);
});

Deno.test("Basic with the placeholder as password, or as user, is found and rebuilt with the rule's user", () => {
  for (const header of [basic("x-access-token", BASIC.placeholder), basic(BASIC.placeholder, "")]) {
    const req = request("/a/b.git/info/refs?service=git-receive-pack", {
      authorization: header,
      "user-agent": "git/2.39",
    });
    assertEquals(findCredential(req, { target: GIT, offered: OFFERED }), {
      credential: BASIC,
      stray: false,
    });
    const applied = applyCredential(req, {
      target: GIT,
      offered: OFFERED,
      credential: BASIC,
      value: VALUE,
    });
    assertEquals(applied.headers.get("authorization"), basic("x-access-token", VALUE));
    assertEquals(applied.headers.get("user-agent"), "git/2.39");
    assertEquals(applied.url, "/a/b.git/info/refs?service=git-receive-pack");
  }
});

Deno.test("a query parameter with the placeholder is replaced, URL-encoded, every other parameter kept in order", () => {
  const url = `/v1/geo?z=1&b=two%20words&key=${QUERY.placeholder}&a=&key2=x`;
  const req = request(url, { host: "maps.example.com:8443" });
  assertEquals(findCredential(req, { target: MAPS, offered: OFFERED }), {
    credential: QUERY,
    stray: false,
  });
  const applied = applyCredential(req, {
    target: MAPS,
    offered: OFFERED,
    credential: QUERY,
    value: "a b&c=d/é",
  });
  assertEquals(applied.url, "/v1/geo?z=1&b=two%20words&key=a%20b%26c%3Dd%2F%C3%A9&a=&key2=x");
  assertEquals([...applied.headers], [["host", "maps.example.com:8443"]]);
});

Deno.test("an absolute https target naming the host and port is read as the origin form is", () => {
  const req = request(`https://maps.example.com:8443/geo?key=${QUERY.placeholder}`);
  assertEquals(findCredential(req, { target: MAPS, offered: OFFERED }).credential, QUERY);
});

/** Requests where no credential may be found; `stray` is whether a placeholder is seen at all. */
const NOT_FOUND: {
  name: string;
  target: { host: string; port: number };
  req: CredentialRequest;
  stray: boolean;
}[] = [
  {
    name: "another host's target (the Bearer rule is for api.github.com)",
    target: { host: "evil.example", port: 443 },
    req: request("/", { authorization: `Bearer ${BEARER.placeholder}` }),
    stray: true,
  },
  {
    name: "a placeholder of a rule for another host, on this host",
    target: GIT,
    req: request("/", { authorization: `Bearer ${BEARER.placeholder}` }),
    stray: true,
  },
  {
    name: "the rule's host on a wrong port",
    target: { host: "maps.example.com", port: 443 },
    req: request(`/geo?key=${QUERY.placeholder}`),
    stray: true,
  },
  {
    name: "the placeholder in another header",
    target: API,
    req: request("/", { "x-api-key": BEARER.placeholder }),
    stray: true,
  },
  {
    name: "the placeholder in the URL path only",
    target: API,
    req: request(`/users/${BEARER.placeholder}/repos`),
    stray: true,
  },
  {
    name: "the placeholder percent-encoded in the path",
    target: API,
    req: request(`/users/${BEARER.placeholder.replace("g", "%67")}`),
    stray: true,
  },
  {
    name: "the query placeholder in another parameter",
    target: MAPS,
    req: request(`/geo?token=${QUERY.placeholder}`),
    stray: true,
  },
  {
    name: "the query parameter given twice",
    target: MAPS,
    req: request(`/geo?key=${QUERY.placeholder}&key=other`),
    stray: true,
  },
  {
    name: "a Basic with garbled base64",
    target: GIT,
    req: request("/", { authorization: `Basic ${btoa(`x:${BASIC.placeholder}`).slice(1)}` }),
    stray: false,
  },
  {
    name: "a Basic whose base64 is not padded",
    target: GIT,
    req: request("/", {
      authorization: `Basic ${btoa(`x:${BASIC.placeholder}a`).replace(/=+$/, "")}`,
    }),
    stray: true,
  },
  {
    name: "the placeholder in Basic for a header rule",
    target: API,
    req: request("/", { authorization: basic("x", BEARER.placeholder) }),
    stray: true,
  },
  {
    name: "two Authorization headers (read as a comma list)",
    target: API,
    req: request("/", [["authorization", `Bearer ${BEARER.placeholder}`], [
      "authorization",
      "Bearer x",
    ]]),
    stray: true,
  },
  {
    name: "the placeholder twice in its header",
    target: API,
    req: request("/", { authorization: `Bearer ${BEARER.placeholder} ${BEARER.placeholder}` }),
    stray: true,
  },
  {
    name: "the placeholder with letters joined to it",
    target: API,
    req: request("/", { authorization: `Bearer ${BEARER.placeholder}ff` }),
    stray: true,
  },
  {
    name: "the placeholder in upper case",
    target: API,
    req: request("/", { authorization: `Bearer ${BEARER.placeholder.toUpperCase()}` }),
    stray: true,
  },
  {
    name: "the placeholder cut short",
    target: API,
    req: request("/", { authorization: `Bearer ${BEARER.placeholder.slice(0, -1)}` }),
    stray: false,
  },
  {
    name: "a Host header naming another host",
    target: API,
    req: request("/", { host: "evil.example", authorization: `Bearer ${BEARER.placeholder}` }),
    stray: true,
  },
  {
    name: "an absolute target naming another host",
    target: API,
    req: request("https://evil.example/", { authorization: `Bearer ${BEARER.placeholder}` }),
    stray: true,
  },
  {
    name: "an absolute http target",
    target: MAPS,
    req: request(`http://maps.example.com:8443/geo?key=${QUERY.placeholder}`),
    stray: true,
  },
];

for (const { name, target, req, stray } of NOT_FOUND) {
  Deno.test(`no credential is found for ${name}`, () => {
    assertEquals(findCredential(req, { target, offered: OFFERED }), { credential: null, stray });
  });
}

Deno.test("a found credential with another offered placeholder elsewhere is stray and is never applied", () => {
  const req = request("/", {
    authorization: `Bearer ${BEARER.placeholder}`,
    "x-debug": btoa(`note ${BASIC.placeholder}`),
  });
  const finding = findCredential(req, { target: API, offered: OFFERED });
  assertEquals(finding, { credential: BEARER, stray: true });
  let message = "";
  try {
    applyCredential(req, { target: API, offered: OFFERED, credential: BEARER, value: VALUE });
  } catch (error) {
    message = (error as Error).message;
  }
  assertStringIncludes(message, "is not a candidate");
  assert(!message.includes(VALUE));
});

Deno.test("a vault value with a line break is refused without the value in the message", () => {
  const req = request("/", { authorization: `Bearer ${BEARER.placeholder}` });
  let message = "";
  try {
    applyCredential(req, {
      target: API,
      offered: OFFERED,
      credential: BEARER,
      value: "secret\r\nX-Evil: 1",
    });
  } catch (error) {
    message = (error as Error).message;
  }
  assertStringIncludes(message, "control character");
  assert(!message.includes("secret"));
});
