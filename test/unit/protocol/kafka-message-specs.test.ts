import { describe, expect, it } from 'vitest';
import { parseMessageSpec, stripComments } from './kafka-message-specs.ts';

describe('reading Kafka message specs', () => {
  it('strips // comments outside strings and keeps // inside them', () => {
    const text = '// licence\n{ "about": "see http://x/y", // trailing\n "n": 1 }';
    expect(JSON.parse(stripComments(text))).toEqual({ about: 'see http://x/y', n: 1 });
  });

  it('resolves common structs, array element types and lowerCamelCase names', () => {
    const spec = parseMessageSpec(
      `{ "apiKey": 1, "type": "request", "name": "XRequest", "validVersions": "0-2",
         "flexibleVersions": "2+",
         "fields": [
           { "name": "Topics", "type": "[]Topic", "versions": "0+" },
           { "name": "Ids", "type": "[]int32", "versions": "1+", "nullableVersions": "1+" },
           { "name": "Tag", "type": "string", "versions": "2+", "tag": 0, "taggedVersions": "2+", "default": "null", "nullableVersions": "2+" }
         ],
         "commonStructs": [ { "name": "Topic", "versions": "0+", "fields": [
           { "name": "TopicName", "type": "string", "versions": "0-1" } ] } ] }`,
      'x.json',
    );
    expect(spec.fields.map((f) => f.name)).toEqual(['topics', 'ids', 'tag']);
    expect(spec.fields[0].type).toMatchObject({
      kind: 'array',
      of: { kind: 'struct', fields: [{ name: 'topicName', versions: { min: 0, max: 1 } }] },
    });
    expect(spec.fields[1]).toMatchObject({
      type: { kind: 'array', of: { kind: 'primitive', name: 'int32' } },
      nullableVersions: { min: 1, max: Infinity },
    });
    expect(spec.fields[2]).toMatchObject({ tag: 0, default: 'null', taggedVersions: { min: 2 } });
    expect(spec.flexibleVersions).toEqual({ min: 2, max: Infinity });
  });
});
