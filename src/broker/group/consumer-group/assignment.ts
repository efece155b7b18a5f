/**
 * Partitions as the consumer group protocol names them: by topic id, a set of
 * partition indexes per topic. Assignments, target assignments and the partitions a
 * member reports owning all take this form (KIP-848 speaks of topic ids, not names).
 *
 * Values are never shared between two owners: every function here returns a fresh map.
 */

/** topic id -> partition indexes. */
export type Assignment = Map<string, Set<number>>;

/** A topic as the assignors and the coordinator see it at one heartbeat. */
export interface TopicImage {
  name: string;
  topicId: string;
  partitions: number;
}

export function emptyAssignment(): Assignment {
  return new Map();
}

export function copyAssignment(a: Assignment): Assignment {
  return new Map([...a].map(([topicId, ps]) => [topicId, new Set(ps)]));
}

export function addPartition(a: Assignment, topicId: string, partition: number): void {
  let ps = a.get(topicId);
  if (!ps) {
    ps = new Set();
    a.set(topicId, ps);
  }
  ps.add(partition);
}

export function hasPartition(a: Assignment, topicId: string, partition: number): boolean {
  return a.get(topicId)?.has(partition) ?? false;
}

export function partitionCount(a: Assignment): number {
  let n = 0;
  for (const ps of a.values()) n += ps.size;
  return n;
}

/** Every (topic id, partition) of `a`, topics and partitions in ascending order. */
export function* partitionsOf(a: Assignment): Generator<[string, number]> {
  for (const topicId of [...a.keys()].sort()) {
    for (const p of [...a.get(topicId)!].sort((x, y) => x - y)) yield [topicId, p];
  }
}

export function assignmentsEqual(a: Assignment, b: Assignment): boolean {
  if (partitionCount(a) !== partitionCount(b)) return false;
  for (const [topicId, p] of partitionsOf(a)) if (!hasPartition(b, topicId, p)) return false;
  return true;
}

/** Whether every partition of `a` is in `b`. */
export function isSubset(a: Assignment, b: Assignment): boolean {
  for (const [topicId, p] of partitionsOf(a)) if (!hasPartition(b, topicId, p)) return false;
  return true;
}

/** The wire form (ConsumerGroupHeartbeat's TopicPartitions), sorted for stable answers. */
export function toTopicPartitions(a: Assignment): Array<{ topicId: string; partitions: number[] }> {
  return [...a.keys()]
    .sort()
    .filter((topicId) => a.get(topicId)!.size > 0)
    .map((topicId) => ({
      topicId,
      partitions: [...a.get(topicId)!].sort((x, y) => x - y),
    }));
}

export function fromTopicPartitions(
  list: ReadonlyArray<{ topicId: string; partitions: readonly number[] }>,
): Assignment {
  const a = emptyAssignment();
  for (const t of list) for (const p of t.partitions) addPartition(a, t.topicId, p);
  return a;
}
