/**
 * Kafka's topic name rule (org.apache.kafka.common.internals.Topic.validate): 1 to 249
 * characters from [a-zA-Z0-9._-], not "." or "..". 249 leaves room for the
 * "-<partition>" suffix of directory names within a 255-byte file name.
 */
import { LogError } from './errors.ts';

export const MAX_TOPIC_NAME_LENGTH = 249;
const LEGAL = /^[a-zA-Z0-9._-]+$/;

export function validateTopicName(name: string): void {
  const problem =
    name.length === 0
      ? "Topic name is illegal, it can't be empty"
      : name === '.' || name === '..'
        ? 'Topic name cannot be "." or ".."'
        : name.length > MAX_TOPIC_NAME_LENGTH
          ? `Topic name is illegal, it can't be longer than ${MAX_TOPIC_NAME_LENGTH} characters`
          : !LEGAL.test(name)
            ? `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`
            : undefined;
  if (problem) throw new LogError('INVALID_TOPIC_EXCEPTION', problem);
}
