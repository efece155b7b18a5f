/**
 * Reads Kafka's JSON message definitions (apache/kafka
 * clients/src/main/resources/common/message/*.json) from the folder beside the
 * repository, for the spec oracle (spec-oracle.test.ts). The files are read where
 * they lie and never copied into this repository.
 *
 * The files are JSON with `//` line comments; `stripComments` removes those outside
 * string literals (an "about" text may hold a URL) before JSON.parse. Struct types
 * are resolved from a field's inline `fields` or the file's `commonStructs`, so the
 * result is one self-contained tree per message.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type VersionRange, versions } from '../../../src/protocol/schema.ts';

/** Where the specs live: `../shared/kafka-message-specs` beside the repository. */
export const SPECS_FOLDER = resolve(
  process.env.KAFKA_MESSAGE_SPECS ??
    fileURLToPath(new URL('../../../../shared/kafka-message-specs', import.meta.url)),
);

export type SpecType =
  | { readonly kind: 'primitive'; readonly name: string }
  | { readonly kind: 'array'; readonly of: SpecType }
  | { readonly kind: 'struct'; readonly fields: readonly SpecField[] };

export interface SpecField {
  /** Kafka's JSON name in lowerCamelCase, as the codec names fields. */
  readonly name: string;
  readonly jsonName: string;
  readonly type: SpecType;
  readonly versions: VersionRange;
  readonly nullableVersions: VersionRange;
  readonly taggedVersions: VersionRange;
  readonly tag?: number;
  /** The JSON `default`, as written (a string, number or boolean), if any. */
  readonly default?: string | number | boolean;
}

export interface MessageSpec {
  readonly apiKey: number;
  readonly type: 'request' | 'response';
  readonly name: string;
  readonly validVersions: VersionRange;
  readonly flexibleVersions: VersionRange;
  readonly fields: readonly SpecField[];
}

export function specsPresent(): boolean {
  return existsSync(SPECS_FOLDER);
}

/** Removes `//` comments that are outside string literals. */
export function stripComments(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\') {
        out += text[i + 1] ?? '';
        i++;
      } else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else out += c;
  }
  return out;
}

const PRIMITIVES = new Set([
  'bool',
  'int8',
  'int16',
  'int32',
  'int64',
  'uint16',
  'uint32',
  'float64',
  'string',
  'bytes',
  'records',
  'uuid',
]);

interface JsonField {
  name: string;
  type: string;
  versions: string;
  nullableVersions?: string;
  taggedVersions?: string;
  tag?: number;
  default?: string | number | boolean;
  fields?: JsonField[];
}

interface JsonStruct {
  name: string;
  fields: JsonField[];
}

function lowerCamel(name: string): string {
  return name[0].toLowerCase() + name.slice(1);
}

function convertFields(
  fields: readonly JsonField[],
  common: ReadonlyMap<string, JsonStruct>,
  file: string,
): SpecField[] {
  return fields.map((f) => {
    const isArray = f.type.startsWith('[]');
    const base = isArray ? f.type.slice(2) : f.type;
    let elem: SpecType;
    if (PRIMITIVES.has(base)) elem = { kind: 'primitive', name: base };
    else {
      const nested = f.fields ?? common.get(base)?.fields;
      if (nested === undefined) throw new Error(`${file}: struct type ${base} has no fields`);
      elem = { kind: 'struct', fields: convertFields(nested, common, file) };
    }
    return {
      name: lowerCamel(f.name),
      jsonName: f.name,
      type: isArray ? { kind: 'array', of: elem } : elem,
      versions: versions(f.versions),
      nullableVersions: versions(f.nullableVersions ?? 'none'),
      taggedVersions:
        f.tag === undefined ? versions('none') : versions(f.taggedVersions ?? f.versions),
      tag: f.tag,
      default: f.default,
    };
  });
}

export function parseMessageSpec(text: string, file: string): MessageSpec {
  const json = JSON.parse(stripComments(text)) as {
    apiKey: number;
    type: string;
    name: string;
    validVersions: string;
    flexibleVersions: string;
    fields: JsonField[];
    commonStructs?: JsonStruct[];
  };
  const common = new Map((json.commonStructs ?? []).map((s) => [s.name, s]));
  return {
    apiKey: json.apiKey,
    type: json.type as 'request' | 'response',
    name: json.name,
    validVersions: versions(json.validVersions),
    flexibleVersions: versions(json.flexibleVersions),
    fields: convertFields(json.fields, common, file),
  };
}

/** Every request and response spec in the folder, keyed `${apiKey}/${type}`. */
export function loadMessageSpecs(folder = SPECS_FOLDER): Map<string, MessageSpec> {
  const out = new Map<string, MessageSpec>();
  for (const file of readdirSync(folder).sort()) {
    if (!file.endsWith('.json')) continue;
    const spec = parseMessageSpec(readFileSync(join(folder, file), 'utf8'), file);
    if (spec.type !== 'request' && spec.type !== 'response') continue;
    out.set(`${spec.apiKey}/${spec.type}`, spec);
  }
  return out;
}
