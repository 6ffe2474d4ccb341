/**
 * What a task's environment holds for the credentials it was given
 * (docs/credentials.md#what-a-task-sees): each rule's `env` names set to its placeholder, and for a
 * `git = true` rule, git configuration by environment (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n,
 * GIT_CONFIG_VALUE_n) with a credential helper for https://host[:port] that prints the Basic user
 * name and the placeholder, nothing else. Pure.
 */
import type { OfferedCredential } from "./request_credential.ts";

/** The environment variables for a task given `offered`; throws when two rules claim one name. */
export function credentialEnvironment(
  offered: readonly OfferedCredential[],
): Record<string, string> {
  const env: Record<string, string> = {};
  const git: [string, string][] = [];
  const gitOrigins = new Set<string>();
  for (const { rule, placeholder } of offered) {
    // The helper below is a shell command: only a placeholder's own characters may go in it.
    if (!/^[a-z0-9-]{1,160}$/.test(placeholder)) {
      throw new Error(`the placeholder for the credential rule ${rule.id} is not a placeholder`);
    }
    for (const name of rule.env) {
      if (name in env) {
        throw new Error(
          `two credential rules given to the task set ${name}; give it only one of them`,
        );
      }
      env[name] = placeholder;
    }
    if (!rule.git) continue;
    if (rule.placement.kind !== "basic") {
      throw new Error(`the credential rule ${rule.id} has git = true without basic`);
    }
    const origin = rule.port === 443 ? `https://${rule.host}` : `https://${rule.host}:${rule.port}`;
    if (gitOrigins.has(origin)) {
      throw new Error(`two credential rules given to the task set git's credential for ${origin}`);
    }
    gitOrigins.add(origin);
    const user = rule.placement.user;
    // An empty helper first clears any helper another configuration gave for this origin.
    git.push([`credential.${origin}.helper`, ""]);
    git.push([`credential.${origin}.helper`, helperFor(user, placeholder)]);
    git.push([`credential.${origin}.username`, user]);
  }
  if (git.length > 0) {
    // No rule's env may name GIT_CONFIG_* (the rule file refuses it), so nothing is overwritten.
    env.GIT_CONFIG_COUNT = String(git.length);
    git.forEach(([key, value], index) => {
      env[`GIT_CONFIG_KEY_${index}`] = key;
      env[`GIT_CONFIG_VALUE_${index}`] = value;
    });
  }
  return env;
}

/**
 * A `!` shell helper that answers git's `get` with the user name and the placeholder, and does
 * nothing for `store` and `erase`. Both are single-quoted; neither can hold a quote (the rule's
 * user name is of A-Z a-z 0-9 . _ @ + -, the placeholder of a-z 0-9 -).
 */
function helperFor(user: string, placeholder: string): string {
  if (!/^[A-Za-z0-9._@+-]{1,128}$/.test(user)) throw new Error("the Basic user name is not safe");
  return `!f() { test "$1" = get || exit 0; echo 'username=${user}'; ` +
    `echo 'password=${placeholder}'; }; f`;
}
