/** openapi.yaml: generated from the routes' zod schemas of both guest services. */
import { stringify } from "yaml";
import { createDesktop, desktopOptionsFromEnv } from "../cua/mod.ts";
import {
  createExecApp,
  createHostApp,
  GUEST_DEFAULTS,
  GUEST_VERSION,
  type GuestSettings,
  type HostExtras,
} from "../exec-guest/mod.ts";

/** Settings for generating the document: defaults, a placeholder token, /workspace. */
function documentSettings(): GuestSettings {
  return {
    ...GUEST_DEFAULTS,
    token: "document",
    hostToken: "document",
    corsOrigins: [],
    desktopRequired: false,
  };
}

/** The OpenAPI 3.1 document of both services (and of any mounted routes), as YAML. */
export function guestOpenApiYaml(extras?: HostExtras): string {
  const settings = documentSettings();
  const endpoints = { exec: "http://127.0.0.1:1337", host: "http://127.0.0.1:1340" };
  const exec = createExecApp({ settings, baseEnv: {} }).app;
  const host = createHostApp({ settings, endpoints }, extras).app;
  const config = {
    openapi: "3.1.0",
    info: {
      title: "gurt guest (box-exec and box-host)",
      version: GUEST_VERSION,
      description: "Generated from the route schemas by mod/guest/openapi.ts; do not edit. " +
        "Every route but GET /v1/health needs Authorization: Bearer <BOX_TOKEN> " +
        "(the host service: BOX_HOST_TOKEN if set).",
    },
    servers: [
      { url: endpoints.exec, description: "exec service: exec and files" },
      { url: endpoints.host, description: "host service: ready, info, egress, desktop" },
    ],
  };
  const execDoc = exec.getOpenAPI31Document(config);
  const hostDoc = host.getOpenAPI31Document(config);
  const paths: Record<string, Record<string, unknown>> = {};
  for (
    const [doc, server] of [[execDoc, config.servers[0]], [hostDoc, config.servers[1]]] as const
  ) {
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      const seen = paths[path];
      const servers = [...((seen?.servers as unknown[]) ?? []), server];
      paths[path] = { ...item, servers };
    }
  }
  const document = {
    ...execDoc,
    paths,
    components: {
      ...execDoc.components,
      schemas: { ...hostDoc.components?.schemas, ...execDoc.components?.schemas },
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
      },
    },
    security: [{ bearer: [] }],
  };
  return stringify(sortPaths(document), { lineWidth: 100 });
}

function sortPaths<T extends { paths?: Record<string, unknown> }>(document: T): T {
  const paths: Record<string, unknown> = {};
  for (const key of Object.keys(document.paths ?? {}).sort()) paths[key] = document.paths![key];
  return { ...document, paths };
}

/** The published document: both services with `--desktop`'s routes mounted (nothing starts). */
export function publishedOpenApiYaml(): string {
  const options = desktopOptionsFromEnv({}, { workspace: "/workspace", home: "/home/box" });
  return guestOpenApiYaml({ mounts: createDesktop(options).mounts() });
}

if (import.meta.main) {
  const target = new URL("../../openapi.yaml", import.meta.url);
  await Deno.writeTextFile(target, publishedOpenApiYaml());
  console.log(`wrote ${target.pathname}`);
}
