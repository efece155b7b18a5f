/**
 * The typed forms of the `job.*` keys that are more than one value: `job.data`,
 * `job.id`, `job.priority` / `job.delay.ms` (a number or a field), and
 * `job.remove.on.complete` / `job.remove.on.fail` (BullMQ's KeepJobs). Each parser
 * throws a SettingError whose message is the per-field validation text.
 */
import { parseTemplate, type Template, TemplateError } from './template.ts';

export class SettingError extends Error {}

/** BullMQ's maximum priority (Job.validateOptions refuses more). */
export const MAX_PRIORITY = 2_097_152;

export type JobDataSpec =
  | { kind: 'value' }
  | { kind: 'after' }
  | { kind: 'fields'; fields: ReadonlyArray<{ name: string; path: string[] }> };

/** `value`, `after`, or a comma-separated list of value fields (dot paths). */
export function parseJobData(text: string): JobDataSpec {
  const t = text.trim();
  if (t === 'value') return { kind: 'value' };
  if (t === 'after') return { kind: 'after' };
  const fields = t
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
  if (fields.length === 0) throw new SettingError('expected value, after, or a list of fields');
  const seen = new Map<string, string>();
  const out = fields.map((f) => {
    const path = f.split('.');
    if (path.some((p) => p === '' || !/^[^\s${}]+$/.test(p))) {
      throw new SettingError(`'${f}' is not a field name or dot path`);
    }
    const name = path[path.length - 1]!;
    const other = seen.get(name);
    if (other !== undefined) {
      throw new SettingError(`'${other}' and '${f}' would both be the job data's '${name}'`);
    }
    seen.set(name, f);
    return { name, path };
  });
  return { kind: 'fields', fields: out };
}

export type JobIdSpec =
  | { kind: 'record' }
  | { kind: 'key' }
  | { kind: 'template'; template: Template };

/** `record`, `key`, or a template with at least one placeholder (`${value.after.id}`). */
export function parseJobId(text: string): JobIdSpec {
  const t = text.trim();
  if (t === 'record') return { kind: 'record' };
  if (t === 'key') return { kind: 'key' };
  const template = templateOf(t);
  if (template.fixed) {
    throw new SettingError(
      'expected record, key, or a template such as ${value.after.id}; a fixed id would give every record the same job',
    );
  }
  if (template.parts.length === 1) {
    throw new SettingError(
      `a lone placeholder may render an integer, which BullMQ refuses as a job id: add fixed text, e.g. row-${template.text}`,
    );
  }
  return { kind: 'template', template };
}

export type NumberSpec =
  | { kind: 'none' }
  | { kind: 'fixed'; value: number }
  | { kind: 'field'; template: Template };

/** Empty (unset), a whole number in [min, max], or one `${value.<field>}` placeholder. */
export function parseNumberOrField(text: string, min: number, max: number): NumberSpec {
  const t = text.trim();
  if (t === '') return { kind: 'none' };
  if (/^\d+$/.test(t)) {
    const value = Number(t);
    if (value < min || value > max) throw new SettingError(`must be between ${min} and ${max}`);
    return { kind: 'fixed', value };
  }
  const template = templateOf(t);
  if (template.parts.length !== 1 || typeof template.parts[0] === 'string') {
    throw new SettingError(
      'expected a whole number or one field placeholder such as ${value.priority}',
    );
  }
  return { kind: 'field', template };
}

/** BullMQ's KeepJobs: `true` (remove at once), `false` (keep), a count, or an age. */
export type KeepJobs = boolean | number | { age: number; count?: number };

const AGE_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `true`, `false`, `<n>` (keep the newest n), `<n>s|m|h|d` (keep for that age). */
export function parseKeepJobs(text: string): KeepJobs {
  const t = text.trim().toLowerCase();
  if (t === 'true') return true;
  if (t === 'false') return false;
  if (/^\d+$/.test(t)) return Number(t);
  const m = /^(\d+)([smhd])$/.exec(t);
  if (m) {
    const age = Number(m[1]) * AGE_UNITS[m[2]!]!;
    if (age === 0) throw new SettingError('an age must be more than 0');
    return { age };
  }
  throw new SettingError(
    'expected true, false, a count of jobs to keep, or an age such as 3600s, 30m, 24h, 7d',
  );
}

export function templateOf(text: string): Template {
  try {
    return parseTemplate(text);
  } catch (e) {
    if (e instanceof TemplateError) throw new SettingError(e.message);
    throw e;
  }
}
