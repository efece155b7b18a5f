/**
 * Connector config files given to `connect standalone`, in the formats Kafka Connect
 * accepts there:
 *   - .properties: flat keys, `name` and `connector.class` among them;
 *   - .json: the body of `POST /connectors` (`{"name": ..., "config": {...}}`) or a flat
 *     object of keys as in `PUT /connectors/{name}/config`.
 * Values are kept as strings, as the REST API and the properties format carry them; the
 * connector's own definitions type them later. Problems come back as values.
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { readPropertiesFile } from './load.ts';

export interface ConnectorFile {
  path: string;
  name: string;
  config: Record<string, string>;
}

export type ConnectorFileResult = { ok: true; file: ConnectorFile } | { ok: false; error: string };

export function readConnectorFile(path: string): ConnectorFileResult {
  const flat = extname(path).toLowerCase() === '.json' ? readJson(path) : readProperties(path);
  if (typeof flat === 'string') return { ok: false, error: `${path}: ${flat}` };
  const name = flat.name;
  if (!name) return { ok: false, error: `${path}: missing "name"` };
  if (!flat['connector.class']) {
    return { ok: false, error: `${path}: connector ${name} has no "connector.class"` };
  }
  return { ok: true, file: { path, name, config: flat } };
}

function readProperties(path: string): Record<string, string> | string {
  const read = readPropertiesFile(path);
  return 'reason' in read ? read.reason : read.values;
}

function readJson(path: string): Record<string, string> | string {
  let body: unknown;
  try {
    body = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return err.code === 'ENOENT' ? 'no such file' : `not valid JSON (${err.message})`;
  }
  if (!isObject(body)) return 'expected a JSON object';
  const nested = isObject(body.config) ? body.config : undefined;
  const source = nested ? { ...nested, name: body.name ?? nested.name } : body;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(source)) {
    if (value === null || value === undefined) continue;
    if (typeof value === 'object') return `"${key}" must be a string, number or boolean`;
    out[key] = String(value);
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
