/**
 * Postgres `money` text to Debezium's values. cash_out writes the value in the session's
 * lc_monetary locale ('$1,234.56', '-$1,234.56', '($1,234.56)' in C and en_US), and the
 * fraction digits it shows are that locale's too: money is an int64 count of the
 * locale's smallest unit, so the connector cannot force a locale of its own (a C session
 * reading a database kept in a zero-digit locale would move every decimal point).
 *
 * Debezium (connection/PostgresMoney, on both the pgoutput and the snapshot path) drops
 * a leading sign or parentheses, one leading currency character and every ',', and
 * reads the rest as a BigDecimal. Where that reading is certain we give the same
 * number; where it is not, we refuse rather than guess:
 *   accepted  an optional '-' (before or after a leading currency) or '(...)', currency
 *             text before or after (any characters but digits, '.', ',', '-' and
 *             parentheses, blanks around), then digits with
 *             optional ',' thousands groups of three and an optional '.' fraction.
 *   refused   anything else, e.g. '1.234,56 €' (de_DE), which Debezium would read as
 *             1.23456: the caller fails the task with a message naming the column, the
 *             value and lc_monetary (see type-mapping.ts).
 */

const MONEY =
  /^(-)?\s*(\()?\s*([^\d.,()-]*?)\s*(-)?\s*(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s*([^\d.,()-]*?)\s*(\))?$/;

/**
 * The plain decimal text ('-1234.56') of a money text, with the fraction digits the text
 * has, as Java's BigDecimal.toPlainString() writes what Debezium parses; null when the
 * text is not in a shape read for sure (see above).
 */
export function moneyDecimalText(text: string): string | null {
  const m = MONEY.exec(text.trim());
  if (!m) return null;
  const [, minus, open, , innerMinus, whole, fraction = '', , close] = m;
  if (Boolean(open) !== Boolean(close)) return null;
  const negative = Boolean(minus) || Boolean(innerMinus) || Boolean(open);
  const digits = `${whole.replace(/,/g, '')}${fraction}`;
  // BigDecimal has no negative zero: '-$0.00' reads as 0.00.
  const zero = /^[0.]*$/.test(digits);
  return `${negative && !zero ? '-' : ''}${whole.replace(/,/g, '')}${fraction}`;
}

/**
 * The unscaled value of a plain decimal text at `scale` digits, rounded half up (away
 * from zero on a tie), as BigDecimal.setScale(scale, RoundingMode.HALF_UP) gives it.
 */
export function unscaledHalfUp(plain: string, scale: number): bigint {
  const negative = plain.startsWith('-');
  const body = negative ? plain.slice(1) : plain;
  const dot = body.indexOf('.');
  const whole = dot < 0 ? body : body.slice(0, dot);
  const fraction = dot < 0 ? '' : body.slice(dot + 1);
  let n = BigInt(`${whole}${fraction.slice(0, scale).padEnd(scale, '0')}` || '0');
  if (fraction.length > scale && fraction.charCodeAt(scale) >= 53 /* '5' */) n += 1n;
  return negative ? -n : n;
}
