/**
 * The plugin's logger. The connector API offers no logger, so the plugin makes its own
 * pino logger with the runtime's conventions (JSON lines, LOG_LEVEL, warn under
 * tests) and names it `connectors.postgres-cdc`; each task binds connector and task id.
 */
import { type Logger, pino } from 'pino';

export type { Logger };

const root = pino({
  level: process.env.LOG_LEVEL ?? (process.env.VITEST ? 'warn' : 'info'),
  base: { pid: process.pid },
  timestamp: pino.stdTimeFunctions.isoTime,
}).child({ logger: 'connectors.postgres-cdc' });

export function pluginLogger(bindings: Record<string, unknown>): Logger {
  return root.child(bindings);
}
