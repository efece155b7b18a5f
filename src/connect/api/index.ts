/**
 * The connector API: everything a plugin may import. Plugins under connectors/ (ours
 * and third parties') import from this module only, so the runtime behind it can
 * change freely. Start with plugin-manifest.ts (what a plugin folder exports),
 * then source-task.ts and sink-task.ts (the task lifecycle and threading contract).
 */
export * from '../../config/config-def.ts';
export { type Clock, ManualClock, systemClock } from '../../util/clock.ts';
/**
 * The runtime's loggers, for plugins: `getLogger('connectors.<plugin>')` logs as the
 * worker does (JSON lines, LOG_LEVEL) and its level can be changed at run time
 * through REST /admin/loggers.
 */
export { getLogger, type Logger } from '../../util/logger.ts';
/** Runs a plugin module (TypeScript or JavaScript) on a worker thread. */
export { startThread } from '../../util/thread.ts';
export * from '../../util/wakeup.ts';
export * from './connect-record.ts';
export * from './connector.ts';
export * from './converter.ts';
export * from './decimal.ts';
export * from './errors.ts';
export * from './offset-storage-reader.ts';
export * from './plugin-manifest.ts';
export * from './plugin-metrics.ts';
export * from './schema.ts';
export * from './schema-utils.ts';
export * from './sink-task.ts';
export * from './source-task.ts';
export * from './topic-reader.ts';
export * from './transformation.ts';
