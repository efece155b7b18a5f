/**
 * Validators for the worker's and broker's keys that config-def.ts does not carry
 * (it keeps only the ones connector plugins share). Each returns an error text that
 * completes "Invalid value for configuration 'k' (value v): ...".
 */
import type { Validator } from './config-def.ts';

/** A host name or IP literal, no scheme or port; empty means "not set". */
export const hostName: Validator<string> = (v) =>
  v === '' || /^[A-Za-z0-9._-]+$|^\[?[0-9A-Fa-f:]+\]?$/.test(v)
    ? undefined
    : 'must be a host name or IP address, without scheme or port';

/** host:port entries, as in bootstrap.servers. */
export const hostPortList: Validator<string[]> = (v) => {
  const bad = v.filter((x) => !/^(\[[0-9A-Fa-f:]+\]|[A-Za-z0-9._-]+):\d{1,5}$/.test(x));
  return bad.length === 0 ? undefined : `contains ${bad.join(', ')}; expected host:port entries`;
};

/** REST listeners: http://host:port or https://host:port, host may be empty (all interfaces). */
export const listenerList: Validator<string[]> = (v) => {
  const bad = v.filter((x) => parseListener(x) === undefined);
  return bad.length === 0
    ? undefined
    : `contains ${bad.join(', ')}; expected entries like http://127.0.0.1:8083 or https://:8443`;
};

export interface Listener {
  protocol: 'http' | 'https';
  /** Empty means every interface. */
  host: string;
  port: number;
}

export function parseListener(text: string): Listener | undefined {
  const m = /^(https?):\/\/(\[[0-9A-Fa-f:]+\]|[A-Za-z0-9._-]*):(\d{1,5})$/i.exec(text);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  return { protocol: m[1].toLowerCase() as 'http' | 'https', host: m[2], port };
}

/** A replication factor: -1 (the broker's default) or at least 1, as Kafka accepts. */
export const replicationFactor: Validator<number> = (v) =>
  v === -1 || v >= 1 ? undefined : 'must be -1 (use the broker default) or at least 1';

/** A partition count: -1 (the broker's default) or at least 1. */
export const partitionCount: Validator<number> = (v) =>
  v === -1 || v >= 1 ? undefined : 'must be -1 (use the broker default) or at least 1';
