/**
 * Kafka's built-in predicates (org.apache.kafka.connect.transforms.predicates.*),
 * which guard a transform with `transforms.<name>.predicate` (and `.negate`).
 */
import {
  type AnyConfigDef,
  type ConnectRecord,
  define,
  nonEmpty,
  type Predicate,
  parseConfigOrThrow,
} from '../api/index.ts';

export const topicNameMatchesConfigDefs: AnyConfigDef[] = [
  define<string>({
    name: 'pattern',
    type: 'string',
    importance: 'medium',
    validator: (v) => {
      try {
        new RegExp(v);
        return undefined;
      } catch (e) {
        return `is not a valid regular expression: ${(e as Error).message}`;
      }
    },
    doc: 'A Java-style regular expression matching the whole topic name.',
  }),
];

/** True when the whole topic name matches `pattern`. */
export class TopicNameMatches implements Predicate {
  private pattern = /^$/;
  configure(config: Readonly<Record<string, unknown>>): void {
    const { values } = parseConfigOrThrow(topicNameMatchesConfigDefs, config);
    this.pattern = new RegExp(`^(?:${values.pattern as string})$`, 'u');
  }
  test(record: ConnectRecord): boolean {
    return this.pattern.test(record.topic);
  }
}

export const hasHeaderKeyConfigDefs: AnyConfigDef[] = [
  define<string>({
    name: 'name',
    type: 'string',
    validator: nonEmpty,
    importance: 'medium',
    doc: 'The header name.',
  }),
];

/** True when the record has at least one header with the given key. */
export class HasHeaderKey implements Predicate {
  private name = '';
  configure(config: Readonly<Record<string, unknown>>): void {
    this.name = parseConfigOrThrow(hasHeaderKeyConfigDefs, config).values.name as string;
  }
  test(record: ConnectRecord): boolean {
    return record.headers?.some((h) => h.key === this.name) === true;
  }
}

/** True for tombstones (a null value). */
export class RecordIsTombstone implements Predicate {
  configure(): void {}
  test(record: ConnectRecord): boolean {
    return record.value === null || record.value === undefined;
  }
}
