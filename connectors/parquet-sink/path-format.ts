/**
 * Joda-Time / java.time DateTimeFormatter patterns as Confluent's TimeBasedPartitioner
 * takes them in `path.format`, e.g. `'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH`.
 *
 * Supported letters: y Y (year; Joda's Y is year of era), M (month: M, MM, MMM short
 * name, MMMM full name), d (day of month), D (day of year), H (hour 0-23), h (hour
 * 1-12), k (hour 1-24), m (minute), s (second), S (fraction of second), E (day name:
 * E/EEE short, EEEE full), a (AM/PM). Text in single quotes is literal; '' is a quote.
 * Names follow `locale`; fields are computed in `timezone`. Any other letter is an
 * error at configuration time rather than a silent literal.
 */

export class PathFormatError extends Error {
  readonly kind = 'path-format';
}

type Token = { literal: string } | { letter: string; width: number };

export interface ZonedFields {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
  dayOfYear: number;
  weekday: number; // 0 = Sunday
}

const LETTERS = new Set(['y', 'Y', 'M', 'd', 'D', 'H', 'h', 'k', 'm', 's', 'S', 'E', 'a']);

export function tokenize(pattern: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i] as string;
    if (c === "'") {
      if (pattern[i + 1] === "'") {
        tokens.push({ literal: "'" });
        i += 2;
        continue;
      }
      const end = pattern.indexOf("'", i + 1);
      if (end < 0) throw new PathFormatError(`unterminated quote in path.format '${pattern}'`);
      tokens.push({ literal: pattern.slice(i + 1, end) });
      i = end + 1;
      continue;
    }
    if (/[a-zA-Z]/.test(c)) {
      if (!LETTERS.has(c)) {
        throw new PathFormatError(`unsupported letter '${c}' in path.format '${pattern}'`);
      }
      let j = i;
      while (pattern[j] === c) j++;
      tokens.push({ letter: c, width: j - i });
      i = j;
      continue;
    }
    tokens.push({ literal: c });
    i++;
  }
  return tokens;
}

export class PathFormatter {
  private readonly tokens: Token[];
  private readonly fieldsFormat: Intl.DateTimeFormat;
  private readonly monthNames: { short: string[]; long: string[] };
  private readonly dayNames: { short: string[]; long: string[] };

  constructor(
    pattern: string,
    readonly timezone: string,
    locale: string,
  ) {
    this.tokens = tokenize(pattern);
    try {
      this.fieldsFormat = new Intl.DateTimeFormat('en-US', {
        timeZone: timezone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      throw new PathFormatError(`unknown timezone '${timezone}'`);
    }
    const lang = locale.replace('_', '-') || 'en';
    const names = (opt: Intl.DateTimeFormatOptions, dates: Date[]) =>
      dates.map((d) => new Intl.DateTimeFormat(lang, { ...opt, timeZone: 'UTC' }).format(d));
    const months = Array.from({ length: 12 }, (_, m) => new Date(Date.UTC(2026, m, 1)));
    const days = Array.from({ length: 7 }, (_, d) => new Date(Date.UTC(2026, 1, 1 + d))); // 2026-02-01 is a Sunday
    this.monthNames = {
      short: names({ month: 'short' }, months),
      long: names({ month: 'long' }, months),
    };
    this.dayNames = {
      short: names({ weekday: 'short' }, days),
      long: names({ weekday: 'long' }, days),
    };
  }

  /** Wall-clock fields of an instant in the formatter's timezone. */
  fields(epochMs: number): ZonedFields {
    const parts: Record<string, number> = {};
    for (const p of this.fieldsFormat.formatToParts(new Date(epochMs))) {
      if (p.type !== 'literal') parts[p.type] = Number(p.value);
    }
    const year = parts.year as number;
    const month = parts.month as number;
    const day = parts.day as number;
    const startOfYear = Date.UTC(year, 0, 1);
    const dayStart = Date.UTC(year, month - 1, day);
    return {
      year,
      month,
      day,
      hour: parts.hour as number,
      minute: parts.minute as number,
      second: parts.second as number,
      millisecond: ((epochMs % 1000) + 1000) % 1000,
      dayOfYear: Math.round((dayStart - startOfYear) / 86_400_000) + 1,
      weekday: new Date(dayStart).getUTCDay(),
    };
  }

  /** Offset of the timezone from UTC at an instant, in ms (positive east of Greenwich). */
  offsetMs(epochMs: number): number {
    const f = this.fields(epochMs);
    const local = Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second, f.millisecond);
    return local - epochMs;
  }

  format(epochMs: number): string {
    const f = this.fields(epochMs);
    let out = '';
    for (const t of this.tokens) {
      if ('literal' in t) {
        out += t.literal;
        continue;
      }
      out += this.formatField(t.letter, t.width, f);
    }
    return out;
  }

  private formatField(letter: string, width: number, f: ZonedFields): string {
    const pad = (n: number, w = width) => String(n).padStart(w, '0');
    switch (letter) {
      case 'y':
      case 'Y':
        // Joda and java.time print a two-letter year as its last two digits.
        return width === 2 ? pad(f.year % 100, 2) : pad(f.year);
      case 'M':
        if (width >= 4) return this.monthNames.long[f.month - 1] as string;
        if (width === 3) return this.monthNames.short[f.month - 1] as string;
        return pad(f.month);
      case 'd':
        return pad(f.day);
      case 'D':
        return pad(f.dayOfYear);
      case 'H':
        return pad(f.hour);
      case 'h':
        return pad(f.hour % 12 === 0 ? 12 : f.hour % 12);
      case 'k':
        return pad(f.hour === 0 ? 24 : f.hour);
      case 'm':
        return pad(f.minute);
      case 's':
        return pad(f.second);
      case 'S':
        return String(f.millisecond).padStart(3, '0').slice(0, width).padEnd(width, '0');
      case 'E':
        return (width >= 4 ? this.dayNames.long : this.dayNames.short)[f.weekday] as string;
      case 'a':
        return f.hour < 12 ? 'AM' : 'PM';
      default:
        throw new PathFormatError(`unsupported letter '${letter}'`);
    }
  }
}
