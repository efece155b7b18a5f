/**
 * The Kafka protocol as data: the field type system and the small DSL that every
 * file under `messages/` uses to describe one API key.
 *
 * It mirrors Kafka's JSON message specs
 * (clients/src/main/resources/common/message/*.json): a message is a list of
 * fields; each field has a name (Kafka's JSON name in lowerCamelCase), a type, the
 * versions it exists in ("0+", "3-7", "none"), the versions in which it may be null,
 * an optional default, and — in flexible versions only — an optional tag number
 * with the versions in which it is carried as a tagged field. Compact encodings and
 * the tagged-field section of every struct follow from the API's flexible-from
 * version; a schema never spells them out. Adding a version is a table edit: widen
 * `maxVersion` and give new fields their `versions`.
 *
 * Nothing here encodes or decodes; `codec.ts` compiles these tables into plans.
 */

/** Scalar wire types. `records` is a length-prefixed byte run kept raw (a Buffer view). */
export type PrimitiveType =
  | 'bool'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint16'
  | 'uint32'
  | 'float64'
  | 'string'
  | 'bytes'
  | 'records'
  | 'uuid';

export interface ArrayOfPrimitive {
  readonly kind: 'array';
  readonly of: PrimitiveType;
}
export interface ArrayOfStruct {
  readonly kind: 'array';
  readonly of: readonly FieldSpec[];
}
/** A nested (non-array) struct, such as Fetch's tagged `currentLeader`. */
export interface StructType {
  readonly kind: 'struct';
  readonly fields: readonly FieldSpec[];
}

export type FieldType = PrimitiveType | ArrayOfPrimitive | ArrayOfStruct | StructType;

/** Inclusive version range; `max` is Infinity for "N+"; an empty range has min > max. */
export interface VersionRange {
  readonly min: number;
  readonly max: number;
}

export interface FieldSpec {
  readonly name: string;
  readonly type: FieldType;
  readonly versions: VersionRange;
  readonly nullableVersions: VersionRange;
  /** Value used when the field is absent from a version, or missing when encoding. */
  readonly default?: unknown;
  /** Tag number, for fields carried in the tagged-field section. */
  readonly tag?: number;
  readonly taggedVersions: VersionRange;
}

export interface ApiSchema {
  readonly apiKey: number;
  /** Kafka's API name, e.g. "Produce", "ApiVersions". */
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  /** First flexible version (compact forms, tagged fields), or null if none implemented. */
  readonly flexibleFrom: number | null;
  readonly request: readonly FieldSpec[];
  readonly response: readonly FieldSpec[];
  /**
   * From this version on, a request may end with a second, empty tagged-field
   * section, which is skipped: librdkafka 2.0 writes one twice in ListGroups v3+
   * requests, and Kafka's parser stops after the struct, so Kafka serves them.
   */
  readonly repeatedRequestTagsFrom?: number;
}

const NONE: VersionRange = { min: 1, max: 0 };

/** Parses Kafka's version-range syntax: "0+", "3-7", "5", "none". */
export function versions(spec: string): VersionRange {
  if (spec === 'none' || spec === '') return NONE;
  if (spec.endsWith('+')) return { min: Number(spec.slice(0, -1)), max: Infinity };
  const dash = spec.indexOf('-');
  if (dash > 0) return { min: Number(spec.slice(0, dash)), max: Number(spec.slice(dash + 1)) };
  const v = Number(spec);
  return { min: v, max: v };
}

export function inRange(range: VersionRange, version: number): boolean {
  return version >= range.min && version <= range.max;
}

export interface FieldOptions {
  /** Versions in which the field may be null (strings, bytes, records, arrays). */
  nullable?: string;
  default?: unknown;
  /** Tag number; requires `tagged`. */
  tag?: number;
  /** Versions in which the field is a tagged field (defaults to `versions`). */
  tagged?: string;
}

/** Declares one field: `field('partitionIndex', 'int32', '0+')`. */
export function field(
  name: string,
  type: FieldType,
  versionSpec: string,
  options: FieldOptions = {},
): FieldSpec {
  const spec: FieldSpec = {
    name,
    type,
    versions: versions(versionSpec),
    nullableVersions: versions(options.nullable ?? 'none'),
    default: options.default,
    tag: options.tag,
    taggedVersions: options.tag === undefined ? NONE : versions(options.tagged ?? versionSpec),
  };
  return spec;
}

/** An array of a primitive (`array('int32')`) or of structs (`array([field(...), ...])`). */
export function array(of: PrimitiveType): ArrayOfPrimitive;
export function array(of: readonly FieldSpec[]): ArrayOfStruct;
export function array(of: PrimitiveType | readonly FieldSpec[]): ArrayOfPrimitive | ArrayOfStruct {
  return typeof of === 'string' ? { kind: 'array', of } : { kind: 'array', of };
}

export function struct(fields: readonly FieldSpec[]): StructType {
  return { kind: 'struct', fields };
}

/** Declares one API. `flexibleFrom` is Kafka's "flexibleVersions" lower bound. */
export function api(spec: {
  apiKey: number;
  name: string;
  minVersion?: number;
  maxVersion: number;
  flexibleFrom: number | null;
  request: readonly FieldSpec[];
  response: readonly FieldSpec[];
  repeatedRequestTagsFrom?: number;
}): ApiSchema {
  return { minVersion: 0, ...spec };
}

export function isFlexible(schema: ApiSchema, version: number): boolean {
  return schema.flexibleFrom !== null && version >= schema.flexibleFrom;
}
