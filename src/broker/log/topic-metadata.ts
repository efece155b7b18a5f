/**
 * Persisted topic metadata: `<dataDir>/topics/<topic>.json`, one file per topic,
 * replaced atomically (tmp + fsync + rename + directory fsync).
 *
 * Format (JSON, version 1):
 *   { "version": 1, "name": "orders", "topicId": "<uuid>", "partitions": 3,
 *     "configs": { "cleanup.policy": "compact", ... } }
 * `configs` holds only the topic's overrides, as the strings the user gave (what
 * DescribeConfigs reports as topic-level values); defaults come from the broker.
 *
 * The file is the commit point of topic changes: CreateTopics and CreatePartitions
 * create partition directories first and write this file last; DeleteTopics removes
 * it first. So after a crash, a partition directory that no metadata claims is a
 * leftover and LogManager deletes it.
 */
import { existsSync, mkdirSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncDir, readJsonFile, writeFileAtomic } from './atomic-file.ts';

export interface TopicMetadata {
  name: string;
  topicId: string;
  partitions: number;
  configs: Record<string, string>;
}

export class TopicMetadataStore {
  readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'topics');
    mkdirSync(this.dir, { recursive: true });
  }

  /** Every stored topic. Throws on a file that cannot be read: data is never guessed away. */
  loadAll(): TopicMetadata[] {
    const out: TopicMetadata[] = [];
    for (const file of readdirSync(this.dir)) {
      if (!file.endsWith('.json')) continue;
      const raw = readJsonFile(join(this.dir, file)) as Record<string, unknown> | undefined;
      if (
        raw?.version !== 1 ||
        typeof raw.name !== 'string' ||
        typeof raw.topicId !== 'string' ||
        !Number.isSafeInteger(raw.partitions)
      ) {
        throw new Error(`topic metadata file ${join(this.dir, file)} is unreadable`);
      }
      out.push({
        name: raw.name,
        topicId: raw.topicId,
        partitions: raw.partitions as number,
        configs: (raw.configs ?? {}) as Record<string, string>,
      });
    }
    return out;
  }

  save(topic: TopicMetadata): void {
    writeFileAtomic(
      join(this.dir, `${topic.name}.json`),
      `${JSON.stringify({ version: 1, ...topic }, null, 2)}\n`,
    );
  }

  remove(name: string): void {
    const path = join(this.dir, `${name}.json`);
    if (existsSync(path)) {
      unlinkSync(path);
      fsyncDir(this.dir);
    }
  }
}
