/**
 * The /etc paths a task's sandbox shows beyond the built-in tools' (runtime's SYSTEM_PATHS): what
 * TLS clients and resolvers read. Its own file, importing nothing, so that the role table can name
 * them in the core's permissions without loading the sandbox.
 */

/** More of /etc than the built-in tools' sandbox shows: what TLS clients and resolvers read. */
export const TASK_ETC_PATHS: readonly string[] = [
  "/etc/ssl",
  "/etc/ca-certificates",
  "/etc/hosts",
  "/etc/mime.types",
];
