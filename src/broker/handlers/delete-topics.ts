/**
 * DeleteTopics (key 20, v0-5 by name): removes each topic's logs and metadata, and
 * the producer state kept for its partitions. TOPIC_DELETION_DISABLED when
 * delete.topic.enable is off.
 */
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { BrokerServices } from './broker-services.ts';
import { toErrorAnswer } from './errors.ts';
import type { RequestHandler } from './handler.ts';

export const handleDeleteTopics: RequestHandler<BrokerServices> = async (
  body,
  _context,
  services,
) => {
  const responses: Message[] = [];
  for (const name of body.topicNames as string[]) {
    if (services.config['delete.topic.enable'] !== true) {
      responses.push({
        name,
        errorCode: ErrorCode.TOPIC_DELETION_DISABLED,
        errorMessage: 'Topic deletion is disabled (delete.topic.enable=false).',
      });
      continue;
    }
    try {
      await services.logs.deleteTopic(name);
      services.producerStates.forgetTopic(name);
      services.logger.info({ topic: name }, 'deleted topic');
      responses.push({ name, errorCode: 0, errorMessage: null });
    } catch (e) {
      responses.push({ name, ...toErrorAnswer(e) });
    }
  }
  return { throttleTimeMs: 0, responses };
};
