/**
 * /admin/loggers, with Kafka Connect's LoggingResource answers:
 *   GET /admin/loggers          200 {"root": {level, last_modified}, "<name>": {...}}
 *   GET /admin/loggers/{name}   200 {level, last_modified}; 404 "Logger X not found."
 *   PUT /admin/loggers/{name}   body {"level": "DEBUG"}; 200 [affected logger names];
 *                               ?scope=cluster asks the herder to set it on every
 *                               worker and answers 204; no level: 400; a level log4j
 *                               does not know: 404 "invalid log level 'X'." (sic, as
 *                               Connect answers)
 */
import type { FastifyInstance } from 'fastify';
import { pinoLevel } from './logger-levels.ts';
import type { RestContext } from './rest-context.ts';
import { RestError } from './rest-errors.ts';

interface LoggerParams {
  logger: string;
}

const loggerParams = {
  type: 'object',
  properties: { logger: { type: 'string' } },
  required: ['logger'],
} as const;

export function registerLoggersResource(app: FastifyInstance, ctx: RestContext): void {
  const { loggerLevels, herder } = ctx;

  app.get('/admin/loggers', { schema: {} }, async () => loggerLevels.all());

  app.get('/admin/loggers/:logger', { schema: { params: loggerParams } }, async (request) => {
    const { logger } = request.params as LoggerParams;
    const level = loggerLevels.level(logger);
    if (level === undefined) throw new RestError(404, `Logger ${logger} not found.`);
    return level;
  });

  app.put(
    '/admin/loggers/:logger',
    {
      schema: {
        params: loggerParams,
        querystring: {
          type: 'object',
          properties: { scope: { type: 'string', default: 'worker' } },
        },
        body: {
          type: ['object', 'null'],
          properties: { level: { type: ['string', 'null'] } },
        },
      },
    },
    async (request, reply) => {
      const { logger } = request.params as LoggerParams;
      const { scope } = request.query as { scope: string };
      const level = (request.body as { level?: string | null } | null)?.level;
      if (level === undefined || level === null) {
        throw new RestError(400, "Desired 'level' parameter was not specified in request.");
      }
      if (pinoLevel(level) === undefined) throw new RestError(404, `invalid log level '${level}'.`);
      // Connect treats an unknown scope as the worker scope (and logs it).
      if (scope.toLowerCase() === 'cluster') {
        await herder.setClusterLoggerLevel(logger, level);
        return reply.code(204).send();
      }
      return loggerLevels.setLevel(logger, level);
    },
  );
}
