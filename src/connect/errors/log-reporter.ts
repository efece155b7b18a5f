/**
 * Logs each tolerated failure (errors.log.enable), in Kafka Connect's wording, with the
 * record's coordinates and, with errors.log.include.messages, its key and value.
 */
import type { Logger } from '../../util/logger.ts';
import type { ErrorReporter, ProcessingContext } from './processing-context.ts';

export class LogReporter implements ErrorReporter {
  constructor(
    private readonly taskId: string,
    private readonly logger: Logger,
    private readonly includeMessages: boolean,
  ) {}

  async report(context: ProcessingContext, error: Error): Promise<void> {
    this.logger.error({ err: error, stage: context.stage }, this.message(context));
  }

  message(context: ProcessingContext): string {
    let text = `Error encountered in task ${this.taskId}. Executing stage '${context.stage}' with class '${context.className}'`;
    const c = context.consumed;
    if (c !== undefined) {
      text += `, where consumed record is {topic='${c.topic}', partition=${c.partition}, offset=${c.offset}, timestamp=${c.timestamp}`;
      if (this.includeMessages) {
        text += `, key=${c.key?.toString('utf8') ?? 'null'}, value=${c.value?.toString('utf8') ?? 'null'}`;
      }
      text += '}';
    } else if (context.sourceRecord !== undefined) {
      const r = context.sourceRecord;
      text += `, where source record is {topic='${r.topic}', partition=${r.kafkaPartition ?? 'null'}`;
      if (this.includeMessages)
        text += `, key=${JSON.stringify(r.key)}, value=${JSON.stringify(r.value)}`;
      text += '}';
    }
    return `${text}.`;
  }
}
