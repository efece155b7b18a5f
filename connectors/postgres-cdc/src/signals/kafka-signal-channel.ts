/**
 * The kafka signal channel (Debezium's KafkaSignalChannel): partition 0 of
 * `signal.kafka.topic`, read by assignment (no group membership). A record is a signal
 * when its key is the connector's topic.prefix (other keys are logged at info and
 * passed over: the topic may be shared by several connectors) and its value is JSON
 * {"id": ..., "type": ..., "data": {...}}; the id is the value's own (Debezium's
 * examples leave it out: it is then named `<topic>@<offset>` in the logs), the record's
 * offset is where the signal sits.
 *
 * Position (where a restart goes on). Debezium's Postgres connector relies on the
 * consumer group's auto-committed offset (and commits on close), so a crash replays or
 * skips signals by how the commit fell. Here the position travels in the connector's
 * source offsets, like the incremental snapshot's state, under our own keys:
 *   signal_kafka_topic   the topic the position is in
 *   signal_kafka_offset  the next offset of that topic to read
 * Every record the task sends after a read carries them, so the offset the runtime
 * commits covers both a signal and the snapshot it started: a restart neither repeats
 * a signal whose effect is stored nor loses one whose effect is not. (A signal that
 * changes nothing stored, a log one, may be acted on again after a crash.) A stored
 * position of another topic (signal.kafka.topic was changed) is not used. Without a
 * stored position the reader starts at the group's committed offset (so a connector
 * coming from Debezium goes on where Debezium's consumer was), else at
 * auto.offset.reset (earliest, as Debezium). The group's offset is moved to the
 * stored position after the runtime commits offsets (`stored`), so
 * kafka-consumer-groups shows how far the connector is; it is never read back while a
 * stored position exists.
 *
 * Called from the external signal loop only (external-signals.ts), except `stored`
 * and `offsetFields`, which only set or read fields.
 */
import { type SourceOffset, TopicReader } from '../../../../src/connect/api/index.ts';
import type { Logger } from '../logger.ts';
import type { SignalChannelReader } from './external-signals.ts';
import type { KafkaChannelSettings } from './signal-channels-config.ts';
import type { SignalRecord } from './signal-table.ts';

export const SIGNAL_KAFKA_TOPIC = 'signal_kafka_topic';
export const SIGNAL_KAFKA_OFFSET = 'signal_kafka_offset';

export interface KafkaSignalChannelOptions {
  settings: KafkaChannelSettings;
  bootstrapServers: string | readonly string[];
  /** topic.prefix: the key a signal record must have. */
  topicPrefix: string;
  /** The reader's client.id when signal.consumer.client.id gives none. */
  clientId: string;
  /** The source offset stored when the task started. */
  stored: SourceOffset | null;
  log: Logger;
}

export class KafkaSignalChannel implements SignalChannelReader {
  readonly name = 'kafka';
  private readonly reader: TopicReader;
  /** The next offset to read, once the signals before it were handled. */
  private position: number | null = null;
  /** The position after the last read, until its signals are handled. */
  private pending: number | null = null;
  /** The position the runtime last committed, and the one the group holds. */
  private durable: number | null = null;
  private inGroup: number | null = null;
  private partitionsChecked = false;

  constructor(private readonly o: KafkaSignalChannelOptions) {
    const s = o.settings;
    this.reader = new TopicReader({
      bootstrapServers: o.bootstrapServers,
      topic: s.topic,
      clientId: s.clientId ?? o.clientId,
      groupId: s.groupId,
      autoOffsetReset: s.autoOffsetReset,
      ...(s.maxPartitionFetchBytes !== null
        ? { maxPartitionFetchBytes: s.maxPartitionFetchBytes }
        : {}),
      ...(s.requestTimeoutMs !== null ? { requestTimeoutMs: s.requestTimeoutMs } : {}),
    });
    const stored = this.storedPosition(o.stored);
    if (stored !== null) {
      this.reader.seek(stored);
      this.position = stored;
      this.durable = stored;
    }
    o.log.info(
      stored === null
        ? `Subscribing to signals topic '${s.topic}' (partition 0), from group ${s.groupId}'s offset, else ${s.autoOffsetReset}`
        : `Subscribing to signals topic '${s.topic}' (partition 0) at offset ${stored}, as stored in the connector's offsets`,
    );
  }

  async read(): Promise<SignalRecord[]> {
    await this.commitToGroup();
    if (!this.partitionsChecked) await this.checkPartitions();
    const records = await this.reader.poll(this.o.settings.pollTimeoutMs);
    this.pending = this.reader.position();
    const signals: SignalRecord[] = [];
    for (const r of records) {
      const signal = this.signalOf(r.key, r.value, r.offset);
      if (signal) signals.push(signal);
    }
    return signals;
  }

  handled(): void {
    if (this.pending !== null) this.position = this.pending;
    this.pending = null;
  }

  /** The fields every record sent from now on carries; null before the position is known. */
  offsetFields(): SourceOffset | null {
    return this.position === null
      ? null
      : { [SIGNAL_KAFKA_TOPIC]: this.o.settings.topic, [SIGNAL_KAFKA_OFFSET]: this.position };
  }

  /** The runtime committed `offset`: its position goes to the group at the next read. */
  stored(offset: SourceOffset | null): void {
    const position = this.storedPosition(offset);
    if (position !== null) this.durable = position;
  }

  close(): void {
    this.reader.close();
  }

  private storedPosition(offset: SourceOffset | null): number | null {
    const at = offset?.[SIGNAL_KAFKA_OFFSET];
    return offset?.[SIGNAL_KAFKA_TOPIC] === this.o.settings.topic &&
      typeof at === 'number' &&
      at >= 0
      ? at
      : null;
  }

  private async commitToGroup(): Promise<void> {
    const durable = this.durable;
    if (durable === null || durable === this.inGroup) return;
    try {
      await this.reader.commit(durable);
      this.inGroup = durable;
    } catch (e) {
      // The stored offsets are what counts; the group's copy is for the tools.
      this.o.log.warn(
        { err: e },
        `could not commit offset ${durable} of signals topic '${this.o.settings.topic}' for group ${this.o.settings.groupId}: ${(e as Error).message}`,
      );
    }
  }

  private async checkPartitions(): Promise<void> {
    const n = await this.reader.partitionCount();
    if (n === 0) return;
    this.partitionsChecked = true;
    if (n > 1)
      this.o.log.error(
        `signals topic '${this.o.settings.topic}' has ${n} partitions; only partition 0 is read, as Debezium reads it: ` +
          'signals sent to other partitions are never seen. Give the topic one partition.',
      );
  }

  private signalOf(key: Buffer | null, value: Buffer | null, offset: number): SignalRecord | null {
    const prefix = this.o.topicPrefix;
    const keyText = key?.toString('utf8') ?? null;
    if (keyText !== prefix) {
      this.o.log.info(`Signal key '${keyText}' doesn't match the connector's name '${prefix}'`);
      return null;
    }
    const text = value?.toString('utf8') ?? '';
    if (text === '') {
      this.o.log.debug(`signal record at offset ${offset} has no value; passed over`);
      return null;
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      this.o.log.error(`Skipped signal due to an error: ${(e as Error).message}: '${text}'`);
      return null;
    }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
      this.o.log.error(`Skipped signal due to an error: not a JSON object: '${text}'`);
      return null;
    }
    const { id, type, data } = doc as Record<string, unknown>;
    return {
      id: typeof id === 'string' ? id : `${this.o.settings.topic}@${offset}`,
      // A missing type is one the processor does not recognize (and says so).
      type: typeof type === 'string' ? type : String(type ?? null),
      data: data == null ? null : JSON.stringify(data),
    };
  }
}
