/**
 * Enumerated config values compared case-insensitively, as Confluent's validators
 * compare them (behavior.on.null.values, s3.ssea.name, ...): `WRITE`, `Write` and
 * `write` are one value, and code downstream sees only the canonical spelling.
 */
import type { Validator } from '../../src/connect/api/index.ts';

/** A validator accepting any case of the allowed values; the message lists them. */
export function enumOf(...allowed: string[]): Validator<string> {
  const lower = new Set(allowed.map((a) => a.toLowerCase()));
  return (v) =>
    lower.has(v.toLowerCase()) ? undefined : `must be one of ${allowed.join(', ')} (in any case)`;
}

/** The allowed spelling of `value` (matched in any case), or `value` itself. */
export function canonical<T extends string>(allowed: readonly T[], value: string): T {
  const lower = value.toLowerCase();
  return (allowed.find((a) => a.toLowerCase() === lower) ?? value) as T;
}
