/**
 * Topic regexes of the consumer group protocol (`subscribed_topic_regex`, KIP-848).
 * Kafka compiles them with RE2/J and matches whole topic names. This broker compiles
 * them as JavaScript regexes anchored at both ends, after refusing what would read
 * differently or not at all:
 *
 * - RE2/J refuses, so Kafka refuses: lookaround `(?=` `(?!` `(?<=` `(?<!`, and
 *   backreferences `\1`..`\9`, `\k<name>`.
 * - RE2/J has, JavaScript has not (refused by name rather than read another way):
 *   `\Q...\E` quoting, `(?P<name>...)` groups, inline flags such as `(?i)`,
 *   POSIX classes like `[[:alpha:]]`, `\A` and `\z`, and `\pL` without braces.
 *
 * Internal topics (`__consumer_offsets`, `__transaction_state`) never match, as with
 * the classic consumer's exclude.internal.topics default; a member that wants one
 * names it in subscribed_topic_names.
 * Pure.
 */

const INTERNAL_TOPICS = new Set(['__consumer_offsets', '__transaction_state']);

const REFUSED: ReadonlyArray<[RegExp, string]> = [
  [/\(\?<?[=!]/, 'lookaround is not supported (RE2 syntax)'],
  [/\\[1-9]|\\k</, 'backreferences are not supported (RE2 syntax)'],
  [/\\Q|\\E/, '\\Q...\\E quoting is not supported by this broker; escape the characters'],
  [/\(\?P</, '(?P<name>...) groups are not supported by this broker; use (?<name>...)'],
  [/\(\?[imsU-]+[):]/, 'inline flags such as (?i) are not supported by this broker'],
  [/\[\[:/, 'POSIX classes such as [[:alpha:]] are not supported by this broker'],
  [/\\[Az]/, '\\A and \\z are not supported by this broker; the regex matches whole names'],
  [/\\[pP][A-Za-z]/, '\\pX without braces is not supported by this broker; use \\p{X}'],
];

export type CompiledRegex = { ok: true; regex: RegExp } | { ok: false; reason: string };

export function compileTopicRegex(source: string): CompiledRegex {
  for (const [pattern, reason] of REFUSED) {
    if (pattern.test(source)) return { ok: false, reason };
  }
  try {
    return { ok: true, regex: new RegExp(`^(?:${source})$`, 'u') };
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
}

/** The topic names a compiled regex subscribes to. */
export function matchingTopics(regex: RegExp, topicNames: Iterable<string>): string[] {
  const out: string[] = [];
  for (const name of topicNames) if (!INTERNAL_TOPICS.has(name) && regex.test(name)) out.push(name);
  return out;
}
