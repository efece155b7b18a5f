/**
 * The log keys every command takes (`connect worker`, `standalone`, `broker`):
 *   log.level   trace | debug | info | warn | error | fatal; default the LOG_LEVEL
 *               environment variable, else info (warn under tests)
 *   log.format  auto (readable lines on a terminal, JSON lines otherwise) | json | pretty
 * Applied by src/util/logger.ts's configureLogging once the command's config is read.
 */
import { type AnyConfigDef, define, oneOf } from './config-def.ts';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;

export const loggingDefs: readonly AnyConfigDef[] = [
  define<string | null>({
    name: 'log.level',
    type: 'string',
    default: null,
    validator: (v, key) => (v === null ? undefined : oneOf(...LOG_LEVELS)(v, key)),
    group: 'Logging',
    defaultDoc: 'LOG_LEVEL, else info',
    doc: 'The level of every logger; REST /admin/loggers changes it at run time.',
  }),
  define<string>({
    name: 'log.format',
    type: 'string',
    default: 'auto',
    validator: oneOf(...LOG_FORMATS),
    group: 'Logging',
    doc: 'auto: readable lines when stdout is a terminal, JSON lines otherwise; json; pretty.',
  }),
];
