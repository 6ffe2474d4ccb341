/**
 * The app tools grants may name until the core's registry provides them: the example app's two
 * tools. The core issue replaces this with the names its registry holds.
 */

/** The app tools `gurt grants check` and `gurt grants explain` accept for now. */
export const EXAMPLE_APP_TOOLS: ReadonlySet<string> = new Set(["example.echo", "example.spend"]);
