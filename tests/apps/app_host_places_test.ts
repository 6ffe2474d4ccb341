/**
 * The app-host role's places from the environment the core gives it (mod/cli/app_host_start.ts):
 * GURT_APP_HOSTS in the egress grammar becomes Deno's net entries, the proxies the environment
 * names are added, and a bad entry is refused rather than granting more or less.
 */
import { assertEquals, assertThrows } from "../assert.ts";
import { appHostPlaces } from "../../mod/cli/app_host_start.ts";
import { ROLE_TABLE } from "../../mod/roles/mod.ts";

Deno.test("GURT_APP_HOSTS entries become net entries on their ports, with the proxies the env names", () => {
  const places = appHostPlaces("/apps/notes/app.ts", {
    GURT_APP_HOME: "/apps/notes/home",
    HOME: "/elsewhere",
    GURT_APP_HOSTS: "api.example.com, *.example.org,10.0.0.5:8080,[2001:db8::1]:443",
    HTTPS_PROXY: "http://127.0.0.1:3128",
    ALL_PROXY: "socks5h://127.0.0.1:3128",
  });
  assertEquals(places, {
    module: "/apps/notes/app.ts",
    home: "/apps/notes/home",
    hosts: [
      "api.example.com:443",
      "api.example.com:80",
      "*.example.org:443",
      "*.example.org:80",
      "10.0.0.5:8080",
      "[2001:db8::1]:443",
    ],
    proxies: ["127.0.0.1:3128"],
  });
  const permissions = ROLE_TABLE["app-host"].permissions(places);
  assertEquals(permissions.net, [...places.hosts, "127.0.0.1:3128"]);
  assertEquals(permissions.write, ["/apps/notes/home"]);
});

Deno.test("an app without hosts reaches nothing, not even its proxy, and one without a home writes nothing", () => {
  const places = appHostPlaces("/apps/notes/app.ts", { HTTPS_PROXY: "http://127.0.0.1:3128" });
  const permissions = ROLE_TABLE["app-host"].permissions(places);
  assertEquals(permissions.net, false);
  assertEquals(permissions.write, false);
  assertEquals(permissions.run, false);
});

Deno.test("a GURT_APP_HOSTS entry that is not a host is refused with the entry", () => {
  assertThrows(
    () => appHostPlaces("/a/app.ts", { GURT_APP_HOSTS: "ok.example,0x7f.1" }),
    Error,
    'GURT_APP_HOSTS: "0x7f.1" is an IP address spelt in an unusual way',
  );
});
