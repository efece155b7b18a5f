/**
 * Numbers written the way Kafka's JsonConverter (Jackson over Java) writes them, so
 * our JSON is byte-identical to Kafka Connect's:
 *   float64  Double.toString: shortest round-trip digits (same digits as JavaScript),
 *            plain with at least one fraction digit for 1e-3 <= |x| < 1e7 ("100.0"),
 *            otherwise "d.dddE±n" ("1.0E7", "1.5E-4").
 *   float32  Float.toString: the same layout over the shortest digits that identify
 *            the float32 value (0.1f is "0.1", not 0.10000000149011612).
 *   decimal  BigDecimal.toString: plain when scale >= 0 and the adjusted exponent is
 *            at least -6, otherwise scientific ("1E-7", "1.23E+5").
 *   NaN and infinities: Jackson quotes them ("NaN", "Infinity", "-Infinity").
 */

/** Split a JS number's shortest representation into its digits and decimal exponent. */
function shortestDigits(text: string): { digits: string; exp: number } {
  // text is like "123.45", "1e-7", "1.5e+21" (no sign). exp is the power of ten of
  // the first digit, so the value is 0.d1d2... * 10^(exp+1).
  const e = text.indexOf('e');
  const mantissa = e < 0 ? text : text.slice(0, e);
  const exp10 = e < 0 ? 0 : Number(text.slice(e + 1));
  const dot = mantissa.indexOf('.');
  const intPart = dot < 0 ? mantissa : mantissa.slice(0, dot);
  const fracPart = dot < 0 ? '' : mantissa.slice(dot + 1);
  let digits = intPart + fracPart;
  let exp = intPart.length - 1 + exp10;
  const lead = digits.search(/[1-9]/);
  if (lead < 0) return { digits: '0', exp: 0 };
  exp -= lead;
  digits = digits.slice(lead).replace(/0+$/, '');
  return { digits: digits === '' ? '0' : digits, exp };
}

function javaLayout(negative: boolean, digits: string, exp: number, zero: boolean): string {
  const sign = negative ? '-' : '';
  if (zero) return `${sign}0.0`;
  if (exp >= -3 && exp < 7) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    const intLen = exp + 1;
    const intPart = digits.length >= intLen ? digits.slice(0, intLen) : digits.padEnd(intLen, '0');
    const frac = digits.length > intLen ? digits.slice(intLen) : '0';
    return `${sign}${intPart}.${frac}`;
  }
  const frac = digits.length > 1 ? digits.slice(1) : '0';
  return `${sign}${digits[0]}.${frac}E${exp}`;
}

function nonFinite(x: number): string {
  return Number.isNaN(x) ? '"NaN"' : x > 0 ? '"Infinity"' : '"-Infinity"';
}

/** Java's Double.toString(x) as JSON text. */
export function formatDouble(x: number): string {
  if (!Number.isFinite(x)) return nonFinite(x);
  // Fast path: in Java's plain range JavaScript prints the same digits without an
  // exponent; only a missing fraction needs adding ("3" -> "3.0").
  const a = Math.abs(x);
  if (a >= 1e-3 && a < 1e7) {
    const text = String(x);
    return text.includes('.') ? text : `${text}.0`;
  }
  const negative = x < 0 || Object.is(x, -0);
  let shortest = shortestDigits(String(a));
  if (shortest.digits.length === 1 && a !== 0) {
    // Java (JDK 19+) prints at least two digits, choosing the two-digit decimal closest
    // to the value: it differs from "d.0" only for subnormals (4.9E-324, not 5.0E-324).
    const two = a.toPrecision(2);
    if (Number(two) === a) shortest = shortestDigits(two);
  }
  return javaLayout(negative, shortest.digits, shortest.exp, x === 0);
}

/** Java's Float.toString(Math.fround(x)) as JSON text. */
export function formatFloat(x: number): string {
  const f = Math.fround(x);
  if (!Number.isFinite(f)) return nonFinite(f);
  const negative = f < 0 || Object.is(f, -0);
  const a = Math.abs(f);
  let text = String(a);
  // The shortest decimal that rounds back to the same float32 has at most 9 digits.
  for (let p = 1; p <= 9; p++) {
    const candidate = a.toPrecision(p);
    if (Math.fround(Number(candidate)) === a) {
      text = String(Number(candidate));
      break;
    }
  }
  let shortest = shortestDigits(text);
  if (shortest.digits.length === 1 && a !== 0) {
    // As for doubles: two digits, the closer one (Float.MIN_VALUE is 1.4E-45).
    const two = a.toPrecision(2);
    if (Math.fround(Number(two)) === a) shortest = shortestDigits(two);
  }
  return javaLayout(negative, shortest.digits, shortest.exp, f === 0);
}

/** Java's BigDecimal.toString() of unscaled * 10^-scale. */
export function formatBigDecimal(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  const coeff = (negative ? -unscaled : unscaled).toString();
  const sign = negative ? '-' : '';
  const adjusted = coeff.length - 1 - scale;
  if (scale >= 0 && adjusted >= -6) {
    if (scale === 0) return sign + coeff;
    if (coeff.length > scale) {
      return `${sign}${coeff.slice(0, coeff.length - scale)}.${coeff.slice(coeff.length - scale)}`;
    }
    return `${sign}0.${'0'.repeat(scale - coeff.length)}${coeff}`;
  }
  const mantissa = coeff.length > 1 ? `${coeff[0]}.${coeff.slice(1)}` : coeff;
  return `${sign}${mantissa}E${adjusted > 0 ? '+' : ''}${adjusted}`;
}
