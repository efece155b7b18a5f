/**
 * hstore's text ('"a"=>"1", "b"=>NULL', keys and values double-quoted with '\' escaping
 * '"' and '\') to Debezium's values (PostgresValueConverter.convertHStore):
 *   hstore.handling.mode=json  io.debezium.data.Json STRING: a JSON object of the pairs,
 *                              NULL values as null, written by Jackson from the HashMap
 *                              pgjdbc's HStoreConverter.fromString returns, so keys come
 *                              in java.util.HashMap iteration order (javaHashMapOrder).
 *   hstore.handling.mode=map   MAP<STRING, optional STRING>, the same pairs, same order.
 * JSON.stringify escapes strings as Jackson does for these (quote, backslash, control
 * characters; non-ASCII as is).
 */

/** The pairs of an hstore text, in the order written. */
export function parseHstore(text: string): Array<[string, string | null]> {
  const out: Array<[string, string | null]> = [];
  let pos = 0;
  const n = text.length;
  const skipBlanks = () => {
    while (pos < n && (text[pos] === ' ' || text[pos] === ',')) pos++;
  };
  const quoted = (): string => {
    if (text[pos] !== '"')
      throw new Error(`unexpected hstore text at ${pos}: ${JSON.stringify(text)}`);
    pos++;
    let s = '';
    while (pos < n && text[pos] !== '"') {
      if (text[pos] === '\\') pos++;
      s += text[pos++];
    }
    pos++;
    return s;
  };
  for (skipBlanks(); pos < n; skipBlanks()) {
    const key = quoted();
    if (text.slice(pos, pos + 2) !== '=>')
      throw new Error(`unexpected hstore text at ${pos}: ${JSON.stringify(text)}`);
    pos += 2;
    if (text.startsWith('NULL', pos)) {
      pos += 4;
      out.push([key, null]);
    } else out.push([key, quoted()]);
  }
  return out;
}

/** Java's String.hashCode (UTF-16 code units, int32 arithmetic). */
function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * Entries in the order a java.util.HashMap (default capacity 16, load factor 0.75) that
 * they were put into in this order iterates them: by bucket (spread hash & (capacity-1)),
 * insertion order within a bucket. Buckets of 8+ colliding keys become trees in Java,
 * which can reorder them; hstore values with that many collisions are not expected.
 */
export function javaHashMapOrder<T>(entries: Array<[string, T]>): Array<[string, T]> {
  let capacity = 16;
  while (entries.length > capacity * 0.75) capacity *= 2;
  return entries
    .map((e, i) => {
      const h = javaStringHash(e[0]);
      return { e, i, bucket: (h ^ (h >>> 16)) & (capacity - 1) };
    })
    .sort((a, b) => a.bucket - b.bucket || a.i - b.i)
    .map((x) => x.e);
}

export function hstoreJson(text: string): string {
  const parts = javaHashMapOrder(parseHstore(text)).map(
    ([k, v]) => `${JSON.stringify(k)}:${v === null ? 'null' : JSON.stringify(v)}`,
  );
  return `{${parts.join(',')}}`;
}

export function hstoreMap(text: string): Map<string, string | null> {
  return new Map(javaHashMapOrder(parseHstore(text)));
}
