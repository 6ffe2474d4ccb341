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
  vault: z.strictObject({
    /** Where a new ANTHROPIC_API_KEY is tried (GET {base}/v1/models) before it is saved. */
    anthropic_base_url: z.string().regex(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, {
      message: "must be an http or https URL such as https://api.anthropic.com",
    }).default("https://api.anthropic.com"),
    /** How long that try may take before the key is not saved. */
    anthropic_check_timeout_ms: positiveMs.default(10_000),
  }).prefault({}),
});

/** gurt.toml after defaults. */
export type FileConfig = z.infer<typeof configSchema>;
