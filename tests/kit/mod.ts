/**
 * The test kit: what tests across folders share. Homes (`withHome`, `makeHome`), grant text
 * (`grant`), waiting on the thing itself (`until`, `waitFor`), a real core in this process
 * (`startBox`), a real `gurt serve` as a child (`startServe`), the real `gurt` command (`gurt`),
 * HTTP over a Unix socket written by hand (`rawJson`, `sendBytes`), and processes (`runAs`).
 */
export * from "./box.ts";
export * from "./build.ts";
export * from "./descriptors.ts";
export * from "./forged_text.ts";
export * from "./grant.ts";
export * from "./gurt.ts";
export * from "./home.ts";
export * from "./process.ts";
export * from "./raw_http.ts";
export * from "./serve.ts";
export * from "./wait.ts";
