/** The names the vault accepts: key names, app names, and which keys the backstop redacts. */

/** A vault key's name: an upper-case letter, then upper-case letters, digits and underscores. */
export const KEY_NAME = /^[A-Z][A-Z0-9_]*$/;

/** An app's name, as it is written before the dot of its tools' names (`example.echo`). */
export const APP_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/** The longest key name gurt accepts. */
const MAX_NAME = 128;

/** The endings of the names whose values the backstop replaces (docs/threat-model.md#secrets). */
const SECRET_ENDINGS = ["KEY", "TOKEN", "SECRET", "PASSWORD", "ACCESS"];

/** The shortest value the backstop replaces. */
export const MIN_REDACTED_LENGTH = 8;

/** Whether `name` is a valid vault key name. */
export function isKeyName(name: string): boolean {
  return name.length <= MAX_NAME && KEY_NAME.test(name);
}

/** Throws a sentence naming the problem when `name` is not a valid vault key name. */
export function checkKeyName(name: string): string {
  if (!isKeyName(name)) {
    throw new VaultNameError(
      `${JSON.stringify(name.slice(0, MAX_NAME))} is not a vault key name: use an upper-case ` +
        `letter, then upper-case letters, digits and _ (such as STRIPE_SECRET_KEY), at most ` +
        `${MAX_NAME} characters`,
    );
  }
  return name;
}

/** Throws a sentence naming the problem when `app` is not an app name. */
export function checkAppName(app: string): string {
  if (!APP_NAME.test(app)) {
    throw new VaultNameError(
      `${JSON.stringify(app.slice(0, 64))} is not an app name: use lower-case letters, digits ` +
        `and -, starting with a letter, as before the dot of the app's tools (example.echo → example)`,
    );
  }
  return app;
}

/** Whether the backstop replaces the value of the key called `name` (when 8 characters or more). */
export function isRedactedName(name: string): boolean {
  return SECRET_ENDINGS.some((ending) => name.endsWith(ending));
}

/** A name the owner gave is not valid: the request is wrong, not the box. */
export class VaultNameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VaultNameError";
  }
}
