/** The schema of gurt.toml: every key, its type and its default, strict. */
import { z } from "zod";

const positiveMs = z.number().int().positive();

/** One table of gurt.toml per part; unknown keys are errors at every level. */
export const configSchema = z.strictObject({
  approvals: z.strictObject({
    /** How long an approval stays open before it expires (seed 002 §6). */
    ttl_ms: positiveMs.default(900_000),
    /** How long a waiting /call or /ask holds its request before it answers pending. */
    wait_ms: positiveMs.default(150_000),
  }).prefault({}),
  broker: z.strictObject({
    /** The largest step, question or cost body, in bytes. */
    max_body_bytes: z.number().int().positive().default(64 * 1024),
    /** What one task may write in all since the core started, in bytes. */
    max_task_bytes: z.number().int().positive().default(20 * 1024 * 1024),
  }).prefault({}),
  portal: z.strictObject({
    /** The owner API and portal's loopback address. */
    listen: z.string().regex(/^127\.0\.0\.1:\d{1,5}$|^\[::1\]:\d{1,5}$|^localhost:\d{1,5}$/, {
      message: "must be a loopback address with a port, such as 127.0.0.1:7780",
    }).default("127.0.0.1:7780"),
  }).prefault({}),
  runtime: z.strictObject({
    /** How long one built-in call may run before its whole sandbox is killed. */
    timeout_ms: positiveMs.default(30_000),
    /** Each sandboxed process's address space, and the size of the sandbox's private /tmp. */
    memory_bytes: z.number().int().min(16 * 1024 * 1024).default(512 * 1024 * 1024),
    /** How many processes one call may have at once (where the box can enforce it). */
    max_processes: z.number().int().min(2).default(64),
    /** The output a call may return; more is cut and the result says truncated. */
    max_output_bytes: z.number().int().positive().default(1024 * 1024),
    /** How long one http_fetch may take, redirects included. */
    fetch_timeout_ms: positiveMs.default(30_000),
    /** The response body http_fetch returns at most; more is cut and marked truncated. */
    max_fetch_bytes: z.number().int().positive().default(5 * 1024 * 1024),
    /** Redirects http_fetch follows, each checked against the grant's hosts first. */
    max_redirects: z.number().int().min(0).max(20).default(5),
    /** Hosts http_fetch may reach at loopback, private, link-local or unique-local addresses. */
    allow_private_hosts: z.array(
      z.string().regex(/^[a-z0-9.-]{1,253}$/, {
        message: "must be a lowercase host name such as printer.lan",
      }),
    ).default([]),
  }).prefault({}),
});

/** gurt.toml after defaults. */
export type FileConfig = z.infer<typeof configSchema>;
