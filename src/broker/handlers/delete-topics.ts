/**
 * DeleteTopics (key 20): removes each topic's logs and metadata, and the producer
 * state kept for its partitions. TOPIC_DELETION_DISABLED when delete.topic.enable is
 * off. v0-5 name topics in topicNames; v6 in topics, each by name or by topic id, as
 * Kafka's ControllerApis takes them: both or neither is INVALID_REQUEST, a name or id
 * given twice is INVALID_REQUEST for each, an unknown id UNKNOWN_TOPIC_ID, and every
 * answer carries both the name and the id it resolved to.
 */
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { ZERO_UUID } from '../../protocol/sentinels.ts';
import type { BrokerServices } from './broker-services.ts';
import { toErrorAnswer } from './errors.ts';
import type { RequestHandler } from './handler.ts';

interface Target {
  name: string | null;
  topicId: string;
  /** Set when the entry is refused before anything is looked up. */
  refused?: { errorCode: number; errorMessage: string };
}

export const handleDeleteTopics: RequestHandler<BrokerServices> = async (
  body,
  context,
  services,
) => {
  const targets =
    context.apiVersion >= 6
      ? byNameOrId(body.topics as Array<{ name: string | null; topicId: string }>, services)
      : (body.topicNames as string[]).map((name) => ({ name, topicId: ZERO_UUID }) as Target);
  const responses: Message[] = [];
  for (const t of targets) {
    const answer = { name: t.name, topicId: t.topicId, errorCode: 0, errorMessage: null };
    if (t.refused !== undefined) {
      responses.push({ ...answer, ...t.refused });
      continue;
    }
    if (services.config['delete.topic.enable'] !== true) {
      responses.push({
        ...answer,
        errorCode: ErrorCode.TOPIC_DELETION_DISABLED,
        errorMessage: 'Topic deletion is disabled (delete.topic.enable=false).',
      });
      continue;
    }
    const name = t.name!;
    try {
      await services.logs.deleteTopic(name);
      services.producerStates.forgetTopic(name);
      services.logger.info({ topic: name }, 'deleted topic');
      responses.push(answer);
    } catch (e) {
      responses.push({ ...answer, ...toErrorAnswer(e) });
    }
  }
  return { throttleTimeMs: 0, responses };
};

/** v6 entries resolved to a name (and its id), or refused. */
function byNameOrId(
  entries: Array<{ name: string | null; topicId: string }>,
  services: BrokerServices,
): Target[] {
  const count = new Map<string, number>();
  const keyOf = (e: { name: string | null; topicId: string }) =>
    e.topicId !== ZERO_UUID ? `id:${e.topicId}` : `name:${e.name}`;
  for (const e of entries) count.set(keyOf(e), (count.get(keyOf(e)) ?? 0) + 1);
  return entries.map((e) => {
    const invalid = (errorMessage: string): Target => ({
      ...e,
      refused: { errorCode: ErrorCode.INVALID_REQUEST, errorMessage },
    });
    const hasId = e.topicId !== ZERO_UUID;
    if (hasId && e.name !== null)
      return invalid('You may not specify both topic name and topic id.');
    if (!hasId && e.name === null) return invalid('Neither topic name nor id were specified.');
    if (count.get(keyOf(e))! > 1)
      return invalid(hasId ? 'Duplicate topic id.' : 'Duplicate topic name.');
    if (hasId) {
      const topic = services.logs.topicById(e.topicId);
      if (topic === undefined) {
        return {
          ...e,
          refused: {
            errorCode: ErrorCode.UNKNOWN_TOPIC_ID,
            errorMessage: `No topic with id ${e.topicId}.`,
          },
        };
      }
      return { name: topic.name, topicId: e.topicId };
    }
    return { name: e.name, topicId: services.logs.topic(e.name!)?.topicId ?? ZERO_UUID };
  });
}
