/**
 * OffsetFetch (key 9). Spec: Kafka's OffsetFetchRequest.json / OffsetFetchResponse.json.
 * v8 batches several groups; v0-7 carry one group at the top level. v9 names the
 * member and its epoch per group (KIP-848): a consumer group's member fetches as itself,
 * an admin client leaves them null / -1.
 */
import { api, array, field as f } from '../schema.ts';

export const offsetFetch = api({
  apiKey: 9,
  name: 'OffsetFetch',
  maxVersion: 9,
  flexibleFrom: 6,
  request: [
    f('groupId', 'string', '0-7'),
    // null (v2+) asks for every committed partition of the group.
    f(
      'topics',
      array([f('name', 'string', '0-7'), f('partitionIndexes', array('int32'), '0-7')]),
      '0-7',
      { nullable: '2-7' },
    ),
    f(
      'groups',
      array([
        f('groupId', 'string', '8+'),
        f('memberId', 'string', '9+', { nullable: '9+', default: null }),
        f('memberEpoch', 'int32', '9+', { default: -1 }),
        f(
          'topics',
          array([f('name', 'string', '8+'), f('partitionIndexes', array('int32'), '8+')]),
          '8+',
          { nullable: '8+' },
        ),
      ]),
      '8+',
    ),
    f('requireStable', 'bool', '7+', { default: false }),
  ],
  response: [
    f('throttleTimeMs', 'int32', '3+'),
    f(
      'topics',
      array([
        f('name', 'string', '0-7'),
        f(
          'partitions',
          array([
            f('partitionIndex', 'int32', '0-7'),
            f('committedOffset', 'int64', '0-7'),
            f('committedLeaderEpoch', 'int32', '5-7', { default: -1 }),
            f('metadata', 'string', '0-7', { nullable: '0-7' }),
            f('errorCode', 'int16', '0-7'),
          ]),
          '0-7',
        ),
      ]),
      '0-7',
    ),
    f('errorCode', 'int16', '2-7', { default: 0 }),
    f(
      'groups',
      array([
        f('groupId', 'string', '8+'),
        f(
          'topics',
          array([
            f('name', 'string', '8+'),
            f(
              'partitions',
              array([
                f('partitionIndex', 'int32', '8+'),
                f('committedOffset', 'int64', '8+'),
                f('committedLeaderEpoch', 'int32', '8+', { default: -1 }),
                f('metadata', 'string', '8+', { nullable: '8+' }),
                f('errorCode', 'int16', '8+'),
              ]),
              '8+',
            ),
          ]),
          '8+',
        ),
        f('errorCode', 'int16', '8+', { default: 0 }),
      ]),
      '8+',
    ),
  ],
});
