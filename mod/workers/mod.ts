/** Task workers other than the model loop: the test worker (`gurt test-worker`). */
export type { TestWorkerArgs } from "./test_worker.ts";

/** The test worker's entry module, for runRole. */
export const testWorkerEntry: URL = new URL("./test_worker.ts", import.meta.url);
