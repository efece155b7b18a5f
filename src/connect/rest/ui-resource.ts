/**
 * The status page on the REST listener:
 *   GET /ui                 redirects to /ui/ (the page's relative URLs need the slash)
 *   GET /ui/                the page (ui/src/index.html)
 *   GET /ui/:file           its assets (app.js, app.css), see ui-bundle.ts
 *   GET /ui/api/topics      topics, partitions, offsets, retention and compaction
 *   GET /ui/api/topics/:topic/partitions/:partition/records?limit=N
 *                           the last N (1..100, default 20) records of a partition
 *   GET /ui/api/groups      consumer groups with members and lag
 * The page reads everything else from the REST API itself (/connectors, /metrics, ...)
 * with relative URLs, so it works behind a reverse proxy under any prefix and sends
 * whatever credentials the browser holds for this origin; the Content-Security-Policy
 * header lets it load and fetch from this origin only.
 *
 * The /ui/api routes answer only what the REST API does not expose, read-only, with the
 * worker's own Kafka client (ui-topics.ts, ui-groups.ts), and refuse bad input with
 * Kafka Connect's error body (`{"error_code":400,"message":...}`), as every route does.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ClusterClient } from '../../protocol/client/cluster-client.ts';
import type { Logger } from '../../util/logger.ts';
import { RestError, restMessages } from './rest-errors.ts';
import { uiBundle } from './ui-bundle.ts';
import { listGroupsWithLag } from './ui-groups.ts';
import { listTopics, NoSuchPartitionError, TAIL_MAX_RECORDS, tailPartition } from './ui-topics.ts';

/** What the /ui/api routes read the cluster with: the worker (Worker.clusterClient). */
export interface UiKafka {
  clusterClient(): ClusterClient;
}

const TAIL_DEFAULT_RECORDS = 20;
/** Kafka's legal topic names (Topic.validate): at most 249 of these characters. */
const LEGAL_TOPIC = /^[a-zA-Z0-9._-]{1,249}$/;

const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

/** Same origin only: no CDN, no third-party fetch, even if a dependency tried one. */
const CSP = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'";

export function registerUiResource(
  app: FastifyInstance,
  logger: Logger,
  kafka: UiKafka | undefined,
): void {
  app.get('/ui', { schema: {} }, async (request, reply) => {
    const path = request.url.split('?')[0]!;
    // Relative, so a proxy's prefix (/connect/ui -> /connect/ui/) is kept; so is the query.
    if (!path.endsWith('/'))
      return reply
        .code(302)
        .header('location', `ui/${request.url.slice(path.length)}`)
        .send();
    return sendFile(reply, logger, 'index.html');
  });
  app.get<{ Params: { file: string } }>('/ui/:file', { schema: {} }, async (request, reply) =>
    sendFile(reply, logger, request.params.file),
  );

  // One client for the page's reads, apart from the worker's own requests (fork()).
  let client: ClusterClient | undefined;
  const cluster = (): ClusterClient => {
    if (kafka === undefined)
      throw new RestError(
        503,
        'This REST server has no Kafka client: topics and groups are not shown',
      );
    client ??= kafka.clusterClient().fork();
    return client;
  };
  app.addHook('onClose', async () => client?.close());

  app.get('/ui/api/topics', { schema: {} }, async (request) => {
    refuseQuery(request.query, []);
    return { topics: await listTopics(cluster()) };
  });
  app.get<{ Params: { topic: string; partition: string }; Querystring: Record<string, string> }>(
    '/ui/api/topics/:topic/partitions/:partition/records',
    { schema: {} },
    async (request) => {
      refuseQuery(request.query, ['limit']);
      const { topic } = request.params;
      if (!LEGAL_TOPIC.test(topic))
        throw new RestError(
          400,
          `Topic name '${topic}' is illegal: it must be 1 to 249 of the characters [a-zA-Z0-9._-]`,
        );
      const partition = integerParam('partition', request.params.partition, 0, 2 ** 31 - 1);
      const limit =
        request.query.limit === undefined
          ? TAIL_DEFAULT_RECORDS
          : integerParam('limit', request.query.limit, 1, TAIL_MAX_RECORDS);
      try {
        return await tailPartition(cluster(), topic, partition, limit);
      } catch (e) {
        if (e instanceof NoSuchPartitionError) throw new RestError(404, e.message);
        throw e;
      }
    },
  );
  app.get('/ui/api/groups', { schema: {} }, async (request) => {
    refuseQuery(request.query, []);
    return listGroupsWithLag(cluster());
  });
}

async function sendFile(reply: FastifyReply, logger: Logger, name: string) {
  const bundle = await uiBundle(logger).catch((e: Error) => {
    throw new RestError(500, e.message);
  });
  const contents = bundle.files.get(name);
  const type = CONTENT_TYPES[name.slice(name.lastIndexOf('.') + 1)];
  if (contents === undefined || type === undefined)
    return reply.code(404).send({ error_code: 404, message: restMessages.notFound });
  return reply
    .header('content-type', type)
    .header('cache-control', 'no-cache')
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', CSP)
    .send(Buffer.from(contents.buffer, contents.byteOffset, contents.byteLength));
}

/** An integer in [min, max], or a 400 naming the parameter and the range. */
function integerParam(name: string, text: string, min: number, max: number): number {
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new RestError(400, `${name} must be an integer from ${min} to ${max}, not '${text}'`);
  return value;
}

/** Query parameters these routes do not read are refused by name, not ignored. */
function refuseQuery(query: unknown, known: readonly string[]): void {
  const unknown = Object.keys((query ?? {}) as object).filter((k) => !known.includes(k));
  if (unknown.length > 0)
    throw new RestError(400, `Unknown query parameter(s): ${unknown.join(', ')}`);
}
