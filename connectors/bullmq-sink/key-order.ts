/**
 * ordering=key, the Redis side: which job of a record key may run. BullMQ (open
 * source) has no job groups, so the order is kept beside BullMQ's own states.
 *
 * Format:
 *   <queue.prefix>:<queue>:key-order:<topic>:<partition>:<key id>   sorted set
 *       members: job ids (<topic>-<partition>-<offset>), score: the record offset
 *   field `connectKeyOrder` of each such job's hash        -> the name of its set
 *   field `connectKeyParks` of the job's hash              -> times it was parked
 * The key id is the record key as job-mapper.ts's keyText renders it, percent-encoded
 * like a job id. The set key has three segments after the queue's, more than any key
 * BullMQ derives from a job id (`<id>:lock`, `<id>:logs`), so the two never meet.
 *
 * Invariants:
 *   - The sink adds a job, its member and its field in one MULTI/EXEC (job-writer.ts),
 *     in offset order; ZADD NX keeps a member's score if a record is written again.
 *   - The head (lowest score) is the only job of the key that may run. It stays the
 *     head while it runs and while it waits for a retry (delayed): only completing or
 *     failing for good releases it (releaseKey), and a head whose job is gone
 *     (removed) or finished (`finishedOn` set) is dropped by the next job of the key
 *     that looks (takeTurn), so a removed job never blocks its key.
 *   - A job whose hash has no field, or whose id is not in its set (released before,
 *     then retried by hand), is outside the order: it runs at once.
 * After a crash: a worker that dies between completing a job and releasing its key
 * leaves a finished head behind, which the next look drops. Nothing else is needed.
 *
 * Both scripts read keys they do not declare (the set named in the hash, the head's
 * hash), so they are for a single Redis, not Redis Cluster (KeyOrderedWorker refuses
 * a Cluster connection).
 */
import type { TopicPartition } from '../../src/connect/api/index.ts';

/** The job-hash field naming the job's set. */
export const KEY_ORDER_FIELD = 'connectKeyOrder';
/** The job-hash field counting how often the job was parked (for its back-off). */
export const KEY_PARKS_FIELD = 'connectKeyParks';

/** The set of one record key of one partition, under its queue. */
export function keyOrderSet(
  prefix: string,
  queue: string,
  tp: TopicPartition,
  keyId: string,
): string {
  return `${prefix}:${queue}:key-order:${tp.topic}:${tp.partition}:${keyId}`;
}

/**
 * Stale heads one takeTurn call drops at most: a script blocks Redis while it runs, so
 * a key with a long run of removed jobs is cleaned over several looks, not in one.
 */
const MAX_DROPS = 100;

/**
 * takeTurn: may this job run now?
 *   KEYS[1] the job's hash    ARGV[1] job id   ARGV[2] the queue's key prefix (toKey(''))
 *   ARGV[3] "1": count a park (the first look), "0": only look (the look after parking)
 * Answers {0} outside the order, {1, set} the head (run; release `set` when done),
 * {2, parks} another job holds the key (parks: how often this job was parked so far).
 */
export const TAKE_TURN_LUA = `
local set = redis.call('HGET', KEYS[1], '${KEY_ORDER_FIELD}')
if not set then return {0} end
if not redis.call('ZSCORE', set, ARGV[1]) then return {0} end
for i = 1, ${MAX_DROPS} do
  local head = redis.call('ZRANGE', set, 0, 0)[1]
  if head == ARGV[1] then return {1, set} end
  local headKey = ARGV[2] .. head
  if redis.call('EXISTS', headKey) == 1 and redis.call('HEXISTS', headKey, 'finishedOn') == 0 then
    break
  end
  redis.call('ZREM', set, head)
end
local parks = tonumber(redis.call('HGET', KEYS[1], '${KEY_PARKS_FIELD}') or '0')
if ARGV[3] == '1' then parks = redis.call('HINCRBY', KEYS[1], '${KEY_PARKS_FIELD}', 1) end
return {2, parks}
`;

/**
 * releaseKey: a job completed or failed for good.
 *   KEYS[1] its set   KEYS[2] the queue's delayed set
 *   ARGV[1] job id    ARGV[2] the queue's key prefix (toKey(''))
 * Answers the next head if it is parked (delayed, and parked before: a job delayed by
 * job.delay.ms has never run, so it has no parks and keeps its delay), else nil; the
 * caller promotes it, so it runs at once.
 */
export const RELEASE_KEY_LUA = `
redis.call('ZREM', KEYS[1], ARGV[1])
local head = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
if not head or not redis.call('ZSCORE', KEYS[2], head) then return false end
if tonumber(redis.call('HGET', ARGV[2] .. head, '${KEY_PARKS_FIELD}') or '0') > 0 then return head end
return false
`;
