/**
 * GET /: the Kafka Connect version this server answers as, the build's commit, the
 * Kafka cluster it works with, and this project's own version and commit
 * (server-info.ts says why they are apart).
 */
import type { FastifyInstance } from 'fastify';
import type { RestContext } from './rest-context.ts';
import { serverInfo } from './server-info.ts';

export function registerRootResource(app: FastifyInstance, ctx: RestContext): void {
  app.get('/', { schema: {} }, async () =>
    serverInfo(ctx.serverInfo, await ctx.herder.kafkaClusterId()),
  );
}
