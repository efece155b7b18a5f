/**
 * The fast path for schemaless JSON (schemas.enable=false) whose records share a
 * shape: flat objects with the same keys in the same order, each holding a string, a
 * number or a boolean (or null), in the compact layout JSON.stringify and Kafka's
 * writers produce. That is a CDC row written without schemas, and most JSON events.
 *
 * How: the general path (text, then JSON.parse) reads a record; its shape (keys and
 * kinds) becomes a struct schema of optional string / float64 / boolean fields, and
 * the compiled CompactStructReader of that schema reads the next records straight
 * from their bytes. The reader returns exactly what JSON.parse would or declines
 * (see compact-struct-reader.ts: escapes, whitespace, 16+ digit numbers, other keys or
 * kinds, nesting), and a declined record takes the general path and teaches its shape.
 *
 * Bounds: a converter keeps at most MAX_SHAPES readers (a reader is generated code);
 * past that, or after MAX_MISSES records in a row that no reader took (a producer
 * writing spaces, say), it stops trying, so the general path costs no more than before.
 * Measured on bench/parquet-sink's rows without schemas (8 fields, 140 bytes): the
 * converter alone went from 0.51-0.76M to 0.84-1.26M rows/s, JSON.parse's own rate being
 * 0.49-0.76M on the same machine.
 */
import { type Schema, Schemas } from '../api/index.ts';
import { CompactStructReader } from './compact-struct-reader.ts';

const MAX_SHAPES = 16;
const MAX_MISSES = 1000;

export class SchemalessShapes {
  private readonly readers = new Map<string, CompactStructReader | null>();
  private current: CompactStructReader | null = null;
  private misses = 0;
  private disabled = false;

  /** The value of a whole message, or undefined to take the general path. */
  read(bytes: Buffer): Record<string, unknown> | undefined {
    const reader = this.current;
    if (reader === null) return undefined;
    const value = reader.read(bytes, 0, bytes.length);
    if (value !== undefined) this.misses = 0;
    return value;
  }

  /** After the general path read a message as `value`: its shape reads the next ones. */
  learn(value: unknown): void {
    if (this.disabled) return;
    if (++this.misses > MAX_MISSES) {
      this.disable();
      return;
    }
    const key = shapeKey(value);
    if (key === undefined) return;
    let reader = this.readers.get(key);
    if (reader === undefined) {
      if (this.readers.size >= MAX_SHAPES) {
        this.disable();
        return;
      }
      reader = CompactStructReader.of(shapeSchema(value as Record<string, unknown>));
      this.readers.set(key, reader);
    }
    this.current = reader;
  }

  private disable(): void {
    this.disabled = true;
    this.current = null;
    this.readers.clear();
  }
}

const KINDS: Record<string, string> = { string: 's', number: 'n', boolean: 'b' };

/**
 * Keys and kinds of a flat object of strings, numbers and booleans, as one string;
 * undefined for anything else (a null says nothing of its field's kind).
 */
function shapeKey(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  let key = '';
  for (const [name, v] of Object.entries(value)) {
    const kind = KINDS[typeof v];
    if (kind === undefined) return undefined;
    key += `${kind}${name.length}:${name}`;
  }
  return key === '' ? undefined : key;
}

function shapeSchema(value: Record<string, unknown>): Schema {
  const optional = { optional: true };
  return Schemas.struct(
    Object.entries(value).map(([name, v]): [string, Schema] => [
      name,
      typeof v === 'string'
        ? Schemas.string(optional)
        : typeof v === 'number'
          ? Schemas.float64(optional)
          : Schemas.boolean(optional),
    ]),
  );
}
