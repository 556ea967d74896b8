import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Daemon and build tests spawn processes and parse real trees; two cores, so keep it modest.
    maxWorkers: 2,
  },
});
