/** openapi.yaml is generated from the route schemas; the checked-in copy must match. */
import { parse } from "yaml";
import { assert, assertEquals } from "../assert.ts";
import { desktopOff } from "../../mod/cua/mod.ts";
import { guestOpenApiYaml, publishedOpenApiYaml } from "../../mod/guest/mod.ts";

const file = new URL("../../openapi.yaml", import.meta.url);

Deno.test("the checked-in openapi.yaml is what the route schemas generate (regenerate: deno run -A mod/guest/openapi.ts)", async () => {
  const checkedIn = await Deno.readTextFile(file);
  assert(
    checkedIn === publishedOpenApiYaml(),
    "openapi.yaml is stale: run `deno run -A mod/guest/openapi.ts` and commit the result",
  );
});

Deno.test("openapi.yaml documents every guest route with its schemas and bearer auth", async () => {
  const document = parse(await Deno.readTextFile(file));
  assertEquals(document.openapi, "3.1.0");
  assertEquals(Object.keys(document.paths).sort(), [
    "/v1/chrome",
    "/v1/cua/batch",
    "/v1/cua/click",
    "/v1/cua/double_click",
    "/v1/cua/drag",
    "/v1/cua/key",
    "/v1/cua/mouse_down",
    "/v1/cua/mouse_up",
    "/v1/cua/mousedown",
    "/v1/cua/mouseup",
    "/v1/cua/move",
    "/v1/cua/screenshot",
    "/v1/cua/scroll",
    "/v1/cua/type",
    "/v1/desktop",
    "/v1/egress",
    "/v1/exec",
    "/v1/exec/stream",
    "/v1/exec/{id}",
    "/v1/files",
    "/v1/files/mkdir",
    "/v1/files/move",
    "/v1/files/raw",
    "/v1/health",
    "/v1/info",
    "/v1/ready",
    "/v1/shutdown",
    "/v1/status",
    "/v1/windows",
  ]);
  const request = document.components.schemas.ExecRequest;
  assertEquals(
    request.additionalProperties,
    false,
    "unknown fields are refused, and documented so",
  );
  assert("command" in request.properties);
  assertEquals(document.components.securitySchemes.bearer, { type: "http", scheme: "bearer" });
  assertEquals(document.paths["/v1/health"].servers.length, 2, "health is on both services");
});

Deno.test("a guest without --desktop publishes the same document: its desktop routes answer, disabled", () => {
  const withoutDesktop = guestOpenApiYaml({ mounts: desktopOff({}, "/workspace") });
  assert(
    withoutDesktop === publishedOpenApiYaml(),
    "the routes of a guest without --desktop differ from openapi.yaml",
  );
  const document = parse(withoutDesktop);
  const cua503 = document.paths["/v1/cua/click"].post.responses["503"].description;
  assert(cua503.includes("without --desktop"), cua503);
  assert(document.paths["/v1/desktop"].get.summary.includes("enabled: false"));
});

Deno.test("openapi.yaml publishes one error body, and every 4xx and 5xx answer of every route refers to it", async () => {
  const document = parse(await Deno.readTextFile(file));
  // An error body is an object whose one property is error.
  const schemas = document.components.schemas as Record<string, { properties?: object }>;
  const errorLike = Object.entries(schemas)
    .filter(([, schema]) => Object.keys(schema.properties ?? {}).join() === "error")
    .map(([name]) => name);
  assertEquals(errorLike, ["Error"]);
  const refs = new Set<string>();
  for (const methods of Object.values(document.paths as Record<string, Record<string, unknown>>)) {
    for (const operation of Object.values(methods)) {
      const responses = (operation as { responses?: Record<string, unknown> }).responses ?? {};
      for (const [status, response] of Object.entries(responses)) {
        if (!/^[45]/.test(status)) continue;
        const json = (response as { content?: Record<string, { schema?: { $ref?: string } }> })
          .content?.["application/json"];
        if (json?.schema?.$ref !== undefined) refs.add(json.schema.$ref);
      }
    }
  }
  assertEquals([...refs], ["#/components/schemas/Error"]);
});
