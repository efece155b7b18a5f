/**
 * GET /metrics on the worker's REST listeners: the Prometheus text exposition
 * (format 0.0.4) of the worker's ConnectMetrics, plus whatever sources it was given
 * (the embedded broker's metrics when the worker runs it). Everything is computed
 * per request (connect-metrics.ts), so a worker nobody scrapes pays nothing for it.
 */
import type { FastifyInstance } from 'fastify';
import { type ConnectMetrics, PROMETHEUS_CONTENT_TYPE } from './connect-metrics.ts';

export function registerMetricsResource(app: FastifyInstance, metrics: ConnectMetrics): void {
  app.get('/metrics', { schema: {} }, async (_request, reply) => {
    const text = await metrics.scrape();
    return reply.code(200).header('content-type', PROMETHEUS_CONTENT_TYPE).send(text);
  });
}
