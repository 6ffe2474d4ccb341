/** Task workers other than the model loop: the test worker (`gurt test-worker`). */
export type { TestWorkerArgs } from "./test_worker.ts";
