/**
 * GET /health (KIP-1017, Kafka Connect 3.9): whether this worker can handle requests,
 * for container probes. The check runs a no-op through the herder's request loop (the
 * one every write and rebalance goes through) and waits for it at most 10 s, as Kafka
 * hard-codes:
 *   200 {"status":"healthy"}    the no-op ran
 *   503 {"status":"starting"}   it did not, and the worker has not joined its group yet
 *   500 {"status":"unhealthy"}  it did not although the worker had started: the loop
 *                                is stuck (a plugin call that never returns, say)
 * with Kafka's messages (WorkerStatus). Unlike GET /, it never waits on Kafka itself.
 */
import type { FastifyInstance } from 'fastify';
import { systemTimers, type Timers } from '../../util/timers.ts';
import { settlesWithin } from '../runtime/plugin-deadlines.ts';
import type { RestContext } from './rest-context.ts';

export const HEALTH_CHECK_TIMEOUT_MS = 10_000;

export const workerStatus = {
  healthy: {
    status: 'healthy',
    message: 'Worker has completed startup and is ready to handle requests.',
  },
  starting: { status: 'starting', message: 'Worker is still starting up.' },
  unhealthy: {
    status: 'unhealthy',
    message: 'Worker was unable to handle this request and may be unable to handle other requests.',
  },
} as const;

export function registerHealthResource(
  app: FastifyInstance,
  ctx: RestContext,
  timeoutMs = HEALTH_CHECK_TIMEOUT_MS,
  timers: Timers = systemTimers,
): void {
  app.get('/health', { schema: {} }, async (_request, reply) => {
    const check = ctx.herder.healthCheck();
    check.catch(() => undefined);
    if (await settlesWithin(check, timeoutMs, timers)) {
      await check;
      return reply.code(200).send(workerStatus.healthy);
    }
    return ctx.herder.isReady()
      ? reply.code(500).send(workerStatus.unhealthy)
      : reply.code(503).send(workerStatus.starting);
  });
}
