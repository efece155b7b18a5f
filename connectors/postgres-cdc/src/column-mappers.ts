/**
 * Debezium's column masks and truncation (ColumnMappers, MaskStrings, TruncateStrings),
 * read from keys whose names carry their parameter:
 *
 *   column.mask.with.<N>.chars                  value -> N '*' (null included)
 *   column.truncate.to.<N>.chars                strings cut to N characters (N > 0)
 *   column.mask.hash.<algorithm>.with.salt.<salt>     hex of the salted digest, hashing
 *                                                     strategy v1 (Java serialization)
 *   column.mask.hash.v2.<algorithm>.with.salt.<salt>  the same with strategy v2 (UTF-8)
 *   column.mask.hash.hashing.strategy.version   v1 (default) or v2: the strategy of the
 *                                               keys without v2 in their name
 * The value of each is a comma-separated list of regular expressions matched against
 * the whole `schema.table.column`, case-insensitively. The value functions and their
 * byte-exact definitions are in masked-values.ts.
 *
 * As in Debezium:
 * - A column gets at most one of them: the first rule that matches, truncations before
 *   masks before v1 hashes before v2 hashes, and among keys of a kind in config order.
 * - Masks and hashes change columns of JDBC's CHAR and VARCHAR types only (text,
 *   varchar, bpchar, "char", name and enums, and domains over these); a truncation
 *   cuts any value sent as a string (json, uuid, inet, ... too), as Debezium applies it
 *   after the column's conversion. The value schema stays the column's string schema,
 *   with the parameter `masked=true` (masks and hashes) or `truncateLength=<N>`
 *   (truncation). Other columns keep their values and schemas (Debezium puts
 *   `masked=true` on a matched column it does not mask; we do not claim that).
 * - A hash is cut to the column's length where it has one (varchar(n), char(n)); a
 *   truncation of a column no longer than N does nothing and adds no parameter.
 * - They apply to the value (`before`, `after`) only, never to the key: a masked key
 *   column is masked in the value and sent as it is in the key, as Debezium does.
 * - Unlike Debezium, column.propagate.source.type's parameters are added besides a mask
 *   (source-type-parameters.ts): Debezium's rule list gives a column matched by both only
 *   the first, which for a hash is the propagation, leaving the value unhashed.
 * - The value a mapper sees is the column's value as otherwise sent, placeholders
 *   included: an unchanged TOASTed text's __debezium_unavailable_value is masked or
 *   hashed like any other text.
 */
import type { ConfigError } from '../../../src/connect/api/index.ts';
import {
  digestName,
  type HashingStrategy,
  hasher,
  JAVA_DIGEST_NAMES,
  truncated,
} from './masked-values.ts';
import type { TableId } from './table-filter.ts';

/** What a mapper changes of one column: its value, and parameters on its schema. */
export interface ColumnTransform {
  /** The key that asked for it, for logs. */
  key: string;
  apply(value: unknown): unknown;
  parameters: Readonly<Record<string, string>>;
}

/** A column as mappers see it. */
export interface MappedColumn {
  /** Of one of JDBC's CHAR and VARCHAR types (the types masks and hashes change). */
  charType: boolean;
  /** Its values are strings (the values a truncation cuts: json, uuid, ... too). */
  stringValues: boolean;
  /** varchar(n)'s and char(n)'s n; -1 for types without a length. */
  length: number;
}

type Rule = {
  key: string;
  patterns: RegExp[];
  /** null: does nothing to this column (and adds nothing to its schema). */
  create(column: MappedColumn): ColumnTransform | null;
};

const TRUNCATE = /^column\.truncate\.to\.(\d+)\.chars$/;
const MASK = /^column\.mask\.with\.(\d+)\.chars$/;
const STRATEGY_KEY = 'column.mask.hash.hashing.strategy.version';
const HASH_V2 = /^column\.mask\.hash\.v2\.([^.]+)\.with\.salt\.(.+)$/;
const HASH = /^column\.mask\.hash\.([^.]+)\.with\.salt\.(.+)$/;

/** Whether `key` is one of the keys this module reads. */
export function isColumnMapperKey(key: string): boolean {
  return (
    key === STRATEGY_KEY ||
    TRUNCATE.test(key) ||
    MASK.test(key) ||
    HASH_V2.test(key) ||
    HASH.test(key)
  );
}

export class ColumnMappers {
  private constructor(private readonly rules: readonly Rule[]) {}

  /** The mappers of a config (raw or parsed values); errors name each key that cannot work. */
  static fromConfig(config: Readonly<Record<string, unknown>>): {
    mappers: ColumnMappers;
    errors: ConfigError[];
  } {
    const errors: ConfigError[] = [];
    const fail = (key: string, value: unknown, message: string) =>
      errors.push({ key, value, message });
    const rawStrategy = config[STRATEGY_KEY];
    let strategy: HashingStrategy = 'v1';
    if (rawStrategy !== undefined && rawStrategy !== null) {
      const s = String(rawStrategy).trim().toLowerCase();
      if (s === 'v1' || s === 'v2') strategy = s;
      else fail(STRATEGY_KEY, rawStrategy, 'must be one of v1, v2');
    }
    const truncates: Rule[] = [];
    const masks: Rule[] = [];
    const hashes: Rule[] = [];
    const hashesV2: Rule[] = [];
    for (const [key, value] of Object.entries(config)) {
      if (key === STRATEGY_KEY || !isColumnMapperKey(key)) continue;
      const patterns = columnPatterns(key, value, fail);
      if (patterns === null) continue;
      let m = TRUNCATE.exec(key);
      if (m) {
        const n = Number(m[1]);
        if (!Number.isSafeInteger(n) || n <= 0) {
          fail(key, value, 'the length N of column.truncate.to.N.chars must be a positive number');
          continue;
        }
        truncates.push({
          key,
          patterns,
          create: (c) =>
            !c.stringValues || (c.length >= 0 && c.length <= n)
              ? null
              : {
                  key,
                  apply: (v) => (typeof v === 'string' ? truncated(v, n) : v),
                  parameters: { truncateLength: String(n) },
                },
        });
        continue;
      }
      m = MASK.exec(key);
      if (m) {
        const n = Number(m[1]);
        if (!Number.isSafeInteger(n) || n > 1_000_000) {
          fail(key, value, 'the length N of column.mask.with.N.chars is too large');
          continue;
        }
        const mask = '*'.repeat(n);
        masks.push({
          key,
          patterns,
          create: (c) => (c.charType ? { key, apply: () => mask, parameters: MASKED } : null),
        });
        continue;
      }
      const v2 = HASH_V2.exec(key);
      m = v2 ?? HASH.exec(key);
      if (!m) continue;
      const digest = digestName(m[1]);
      if (digest === null) {
        fail(
          key,
          value,
          `'${m[1]}' is not a hash algorithm this connector has; use one of Java's MessageDigest names: ${JAVA_DIGEST_NAMES.join(', ')}`,
        );
        continue;
      }
      const hash = hasher(digest, m[2], v2 ? 'v2' : strategy);
      (v2 ? hashesV2 : hashes).push({
        key,
        patterns,
        create: (c) => {
          if (!c.charType) return null;
          const cut = c.length > 0 ? c.length : null;
          return {
            key,
            apply: (v) =>
              typeof v !== 'string' ? null : cut === null ? hash(v) : truncated(hash(v), cut),
            parameters: MASKED,
          };
        },
      });
    }
    return { mappers: new ColumnMappers([...truncates, ...masks, ...hashes, ...hashesV2]), errors };
  }

  get isEmpty(): boolean {
    return this.rules.length === 0;
  }

  /** What the mappers do to a column's value; null for nothing. */
  forColumn(table: TableId, name: string, column: MappedColumn): ColumnTransform | null {
    if (this.rules.length === 0) return null;
    const full = `${table.schema}.${table.table}.${name}`;
    const rule = this.rules.find((r) => r.patterns.some((p) => p.test(full)));
    return rule ? rule.create(column) : null;
  }
}

const MASKED = Object.freeze({ masked: 'true' });

function columnPatterns(
  key: string,
  value: unknown,
  fail: (key: string, value: unknown, message: string) => void,
): RegExp[] | null {
  const list = Array.isArray(value)
    ? value.map(String)
    : typeof value === 'string'
      ? value.split(',')
      : [];
  const patterns: RegExp[] = [];
  for (const p of list.map((s) => s.trim()).filter((s) => s !== '')) {
    try {
      patterns.push(new RegExp(`^(?:${p})$`, 'i'));
    } catch {
      fail(key, value, `"${p}" is not a valid regular expression`);
      return null;
    }
  }
  if (patterns.length === 0) {
    fail(
      key,
      value,
      'must list the columns (schema.table.column regular expressions) it applies to',
    );
    return null;
  }
  return patterns;
}

/**
 * The keys of this module with what they do, for docs/connectors (their names carry a
 * parameter, so no config definition lists them).
 */
export const COLUMN_MAPPER_KEY_DOCS: ReadonlyArray<readonly [key: string, doc: string]> = [
  [
    'column.mask.with.<N>.chars',
    'Columns (schema.table.column regexes) whose values become N asterisks.',
  ],
  ['column.truncate.to.<N>.chars', 'Columns whose string values are cut to N characters.'],
  [
    'column.mask.hash.<algorithm>.with.salt.<salt>',
    "Columns whose values become the hex of Debezium's salted hash (Java MessageDigest names: SHA-256, MD5, ...), hashing strategy v1 unless column.mask.hash.hashing.strategy.version says v2.",
  ],
  [
    'column.mask.hash.v2.<algorithm>.with.salt.<salt>',
    'The same with hashing strategy v2 (the UTF-8 bytes).',
  ],
  [
    'column.mask.hash.hashing.strategy.version',
    'v1 (default) or v2: the strategy of column.mask.hash.<algorithm>.with.salt.<salt>.',
  ],
];
