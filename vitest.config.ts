import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'connectors/*/test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Integration tests start real services (Postgres, brokers, worker processes);
    // generous limits keep a loaded 2-core machine from failing them on time alone.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Each worker process runs its files one after another with the module cache kept:
    // isolated, every file imported the runtime afresh (2-3 s per file, about a third
    // of the suite's time). Tests therefore leave no global state behind.
    isolate: false,
    maxWorkers: 2,
  },
});
