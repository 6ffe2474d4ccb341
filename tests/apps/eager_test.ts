/**
 * `start = "eager"`: the core starts the app when it starts, before any call; a lazy app waits for
 * its first call.
 */
import { assertEquals } from "../assert.ts";
import { startAppBox } from "./app_kit.ts";

const NOTES = new URL("../../docs/examples/notes-app", import.meta.url).pathname;

Deno.test({
  name:
    'an app with start = "eager" runs as soon as gurt serve starts; a lazy one at its first call',
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const box = await startAppBox();
    try {
      const lazy = await Deno.readTextFile(`${NOTES}/app.toml`);
      const eagerSource = await box.source(
        "eager",
        lazy.replace('kind = "module"', 'kind = "module"\nstart = "eager"'),
        {
          "app.ts": await Deno.readTextFile(`${NOTES}/app.ts`),
        },
      );
      const lazySource = await box.source("lazy", lazy, {
        "app.ts": await Deno.readTextFile(`${NOTES}/app.ts`),
      });
      assertEquals((await box.add(eagerSource, "eager")).status, 200);
      assertEquals((await box.add(lazySource, "lazy")).status, 200);
      await box.restart();
      let state = "";
      for (let i = 0; i < 200 && state !== "running"; i++) {
        state = (await box.admin("GET", "/apps/eager")).body.app.state;
        if (state !== "running") await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assertEquals(state, "running");
      assertEquals((await box.admin("GET", "/apps/lazy")).body.app.state, "stopped");
    } finally {
      await box.close();
    }
  },
});
