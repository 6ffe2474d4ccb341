/**
 * docs/credentials.md#what-a-task-sees: the environment a task gets for its credentials, and git
 * run for real under it: `git credential fill` answers with the rule's user and the placeholder.
 */
import {
  credentialEnvironment,
  type CredentialRule,
  newPlaceholder,
  type OfferedCredential,
  parseCredentialRule,
} from "../../mod/credentials/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";

function offer(id: string, content: string): OfferedCredential {
  const parsed = parseCredentialRule({ file: `credentials/${id}.toml`, content });
  assert(parsed.ok, JSON.stringify(parsed));
  const rule: CredentialRule = parsed.rule;
  return { rule, placeholder: newPlaceholder(id) };
}

const GITHUB = offer(
  "github",
  'host = "github.com"\nsecret = "GH"\nbasic = { user = "x-access-token" }\ngit = true\n' +
    'env = ["GIT_TOKEN"]\n',
);
const GH_API = offer(
  "gh-api",
  'host = "api.github.com"\nsecret = "GH"\nheader = "Authorization: Bearer {}"\n' +
    'env = ["GH_TOKEN", "GITHUB_TOKEN"]\n',
);
const FORGE = offer(
  "forge",
  'host = "git.example.com"\nport = 8443\nsecret = "FORGE"\nbasic = { user = "oauth2" }\ngit = true\n',
);

/** Runs `git credential fill` for `url` under `env` alone, in an empty home; its stdout and code. */
async function fill(
  env: Record<string, string>,
  input: string,
  globalConfig = "",
): Promise<{ code: number; stdout: string }> {
  const home = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${home}/.gitconfig`, globalConfig);
    const child = new Deno.Command("git", {
      args: ["credential", "fill"],
      clearEnv: true,
      env: {
        ...env,
        HOME: home,
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_TERMINAL_PROMPT: "0",
      },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(input));
    await writer.close();
    const out = await child.output();
    return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test("each rule's env names hold its placeholder", () => {
  const env = credentialEnvironment([GH_API]);
  assertEquals(env, { GH_TOKEN: GH_API.placeholder, GITHUB_TOKEN: GH_API.placeholder });
});

Deno.test("two git rules get consecutive GIT_CONFIG indices for their own origins", () => {
  const env = credentialEnvironment([GITHUB, GH_API, FORGE]);
  assertEquals(env.GIT_CONFIG_COUNT, "6");
  assertEquals(env.GIT_TOKEN, GITHUB.placeholder);
  assertEquals(env.GIT_CONFIG_KEY_0, "credential.https://github.com.helper");
  assertEquals(env.GIT_CONFIG_VALUE_0, "");
  assertEquals(env.GIT_CONFIG_KEY_1, "credential.https://github.com.helper");
  assertStringIncludes(env.GIT_CONFIG_VALUE_1, GITHUB.placeholder);
  assertEquals(env.GIT_CONFIG_KEY_2, "credential.https://github.com.username");
  assertEquals(env.GIT_CONFIG_VALUE_2, "x-access-token");
  assertEquals(env.GIT_CONFIG_KEY_3, "credential.https://git.example.com:8443.helper");
  assertEquals(env.GIT_CONFIG_KEY_5, "credential.https://git.example.com:8443.username");
  assertEquals(env.GIT_CONFIG_VALUE_5, "oauth2");
  assertEquals(env.GIT_CONFIG_KEY_6, undefined);
});

Deno.test("git credential fill under the environment prints the rule's user and the placeholder", async () => {
  const env = credentialEnvironment([GITHUB, FORGE]);
  const github = await fill(env, "protocol=https\nhost=github.com\npath=a/b.git\n\n");
  assertEquals(github.code, 0);
  assertStringIncludes(github.stdout, "username=x-access-token\n");
  assertStringIncludes(github.stdout, `password=${GITHUB.placeholder}\n`);
  const forge = await fill(env, "protocol=https\nhost=git.example.com:8443\n\n");
  assertEquals(forge.code, 0);
  assertStringIncludes(forge.stdout, "username=oauth2\n");
  assertStringIncludes(forge.stdout, `password=${FORGE.placeholder}\n`);
});

Deno.test("git's helper answers nothing for another host, nor for plain http", async () => {
  const env = credentialEnvironment([GITHUB]);
  const other = await fill(env, "protocol=https\nhost=gitlab.com\n\n");
  assert(other.code !== 0, other.stdout);
  assert(!other.stdout.includes(GITHUB.placeholder));
  const plain = await fill(env, "protocol=http\nhost=github.com\n\n");
  assert(plain.code !== 0, plain.stdout);
  assert(!plain.stdout.includes(GITHUB.placeholder));
});

Deno.test("the helpers the task's own git configuration gives (any host, this host) are cleared first", async () => {
  const env = credentialEnvironment([GITHUB]);
  const config = '[credential]\n\thelper = "!f() { echo password=WRONG; }; f"\n' +
    '[credential "https://github.com"]\n\thelper = "!f() { echo password=WRONG2; }; f"\n';
  const found = await fill(env, "protocol=https\nhost=github.com\n\n", config);
  assertEquals(found.code, 0);
  assertStringIncludes(found.stdout, `password=${GITHUB.placeholder}\n`);
  assert(!found.stdout.includes("WRONG"), found.stdout);
});

Deno.test("two rules claiming one environment name are refused", () => {
  const twin = offer(
    "twin",
    'host = "b.example.com"\nsecret = "K"\nquery = "t"\nenv = ["GH_TOKEN"]\n',
  );
  let message = "";
  try {
    credentialEnvironment([GH_API, twin]);
  } catch (error) {
    message = (error as Error).message;
  }
  assertStringIncludes(message, "two credential rules given to the task set GH_TOKEN");
});
