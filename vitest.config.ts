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
    maxWorkers: 2,
  },
});
