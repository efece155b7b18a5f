/**
 * A JAAS login configuration file, the format `java.security.auth.login.config` names
 * (Java's ConfigFile), read as far as Kafka Connect's REST Basic authentication needs:
 *
 *   KafkaConnect {
 *     org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
 *       file="/etc/kafka/connect.password";
 *   };
 *
 * Entries are `Name { module flag key=value ...; ... };`, values quoted (with
 * backslash escapes) or bare, comments `//` and `/* *\/` as Java's tokenizer takes
 * them. Anything else is an error naming the line, never skipped.
 */

export interface JaasModule {
  className: string;
  /** required, requisite, sufficient or optional. */
  flag: string;
  options: Map<string, string>;
}

export class JaasSyntaxError extends Error {
  constructor(path: string, line: number, message: string) {
    super(`${path}, line ${line}: ${message}`);
    this.name = 'JaasSyntaxError';
  }
}

const FLAGS = new Set(['required', 'requisite', 'sufficient', 'optional']);

interface Token {
  kind: 'word' | 'string' | 'punct';
  text: string;
  line: number;
}

function tokenize(text: string, path: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\n') {
      line++;
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else if (text.startsWith('//', i) || c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) throw new JaasSyntaxError(path, line, 'a /* comment is not closed');
      for (let j = i; j < end; j++) if (text[j] === '\n') line++;
      i = end + 2;
    } else if (c === '"' || c === "'") {
      const start = line;
      let value = '';
      i++;
      for (;;) {
        if (i >= text.length)
          throw new JaasSyntaxError(path, start, 'a quoted value is not closed');
        const d = text[i]!;
        if (d === c) break;
        if (d === '\n') line++;
        if (d === '\\' && i + 1 < text.length) {
          i++;
          const e = text[i]!;
          value += e === 'n' ? '\n' : e === 't' ? '\t' : e;
        } else value += d;
        i++;
      }
      i++;
      tokens.push({ kind: 'string', text: value, line: start });
    } else if ('{};='.includes(c)) {
      tokens.push({ kind: 'punct', text: c, line });
      i++;
    } else {
      let j = i;
      while (j < text.length && !/[\s{};="']/.test(text[j]!)) j++;
      tokens.push({ kind: 'word', text: text.slice(i, j), line });
      i = j;
    }
  }
  return tokens;
}

/** Every entry of the file by name, each its login modules in order. */
export function parseJaasConfig(text: string, path: string): Map<string, JaasModule[]> {
  const tokens = tokenize(text, path);
  const entries = new Map<string, JaasModule[]>();
  let at = 0;
  const lastLine = tokens.at(-1)?.line ?? 1;
  const next = (what: string): Token => {
    const t = tokens[at++];
    if (t === undefined)
      throw new JaasSyntaxError(path, lastLine, `the file ends where ${what} should be`);
    return t;
  };
  const expect = (punct: string, what: string): void => {
    const t = next(`'${punct}' ${what}`);
    if (t.kind !== 'punct' || t.text !== punct)
      throw new JaasSyntaxError(path, t.line, `expected '${punct}' ${what}, found '${t.text}'`);
  };
  while (at < tokens.length) {
    const name = next('an entry name');
    if (name.kind !== 'word')
      throw new JaasSyntaxError(path, name.line, `expected an entry name, found '${name.text}'`);
    expect('{', `after the entry name ${name.text}`);
    const modules: JaasModule[] = [];
    for (;;) {
      const t = next(`a login module of ${name.text} or '}'`);
      if (t.kind === 'punct' && t.text === '}') break;
      if (t.kind !== 'word')
        throw new JaasSyntaxError(path, t.line, `expected a login module class, found '${t.text}'`);
      const flag = next(`the control flag of ${t.text}`);
      if (flag.kind !== 'word' || !FLAGS.has(flag.text.toLowerCase()))
        throw new JaasSyntaxError(
          path,
          flag.line,
          `the control flag of ${t.text} must be required, requisite, sufficient or optional, not '${flag.text}'`,
        );
      const options = new Map<string, string>();
      for (;;) {
        const o = next(`an option of ${t.text} or ';'`);
        if (o.kind === 'punct' && o.text === ';') break;
        if (o.kind !== 'word')
          throw new JaasSyntaxError(
            path,
            o.line,
            `expected an option name of ${t.text}, found '${o.text}'`,
          );
        expect('=', `after the option ${o.text}`);
        const v = next(`the value of ${o.text}`);
        if (v.kind === 'punct')
          throw new JaasSyntaxError(
            path,
            v.line,
            `expected the value of ${o.text}, found '${v.text}'`,
          );
        options.set(o.text, v.text);
      }
      modules.push({ className: t.text, flag: flag.text.toLowerCase(), options });
    }
    expect(';', `after the entry ${name.text}`);
    if (entries.has(name.text)) {
      throw new JaasSyntaxError(path, name.line, `the entry ${name.text} is given twice`);
    }
    entries.set(name.text, modules);
  }
  return entries;
}
