/** GET /: the worker's version, build commit and the Kafka cluster it works with. */
import type { FastifyInstance } from 'fastify';
import type { RestContext } from './rest-context.ts';

export function registerRootResource(app: FastifyInstance, ctx: RestContext): void {
  app.get('/', { schema: {} }, async () => ({
    version: ctx.serverInfo.version,
    commit: ctx.serverInfo.commit,
    kafka_cluster_id: await ctx.herder.kafkaClusterId(),
  }));
}
