/**
 * RegexRouter, as Kafka's org.apache.kafka.connect.transforms.RegexRouter: when the
 * whole topic name matches `regex`, the topic becomes `replacement`, where `$1`,
 * `${name}` refer to groups (Java's syntax; `$<name>` works too).
 */
import {
  type AnyConfigDef,
  type ConnectRecord,
  define,
  parseConfigOrThrow,
  type Transformation,
} from '../api/index.ts';

export const regexRouterConfigDefs: AnyConfigDef[] = [
  define<string>({
    name: 'regex',
    type: 'string',
    importance: 'high',
    doc: 'Regular expression to use for matching the whole topic name.',
    validator: (v) => {
      try {
        new RegExp(v);
        return undefined;
      } catch (e) {
        return `is not a valid regular expression: ${(e as Error).message}`;
      }
    },
  }),
  define<string>({
    name: 'replacement',
    type: 'string',
    importance: 'high',
    doc: 'Replacement string, with $1 (or a named group) for captured groups.',
  }),
];

export class RegexRouter implements Transformation {
  private regex = /^$/;
  private replacement = '';

  configure(config: Readonly<Record<string, unknown>>): void {
    const { values } = parseConfigOrThrow(regexRouterConfigDefs, config);
    this.regex = new RegExp(`^(?:${values.regex as string})$`, 'u');
    // Java writes named groups as ${name}; JavaScript as $<name>.
    this.replacement = (values.replacement as string).replace(/\$\{(\w+)\}/g, '$$<$1>');
  }

  apply<R extends ConnectRecord>(record: R): R | null {
    if (!this.regex.test(record.topic)) return record;
    return { ...record, topic: record.topic.replace(this.regex, this.replacement) };
  }
}
