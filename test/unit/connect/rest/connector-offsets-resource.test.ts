import { afterEach, describe, expect, it } from 'vitest';
import { type RestFixture, restFixture, sinkConfig, sourceConfig } from './rest-fixture.ts';

let f: RestFixture;
afterEach(async () => {
  await f.close();
});

async function withConnectors(options?: Parameters<typeof restFixture>[0]) {
  f = await restFixture(options);
  await f.app.inject({
    method: 'POST',
    url: '/connectors',
    payload: { name: 'src', config: sourceConfig('src') },
  });
  await f.app.inject({
    method: 'POST',
    url: '/connectors',
    payload: { name: 'snk', config: sinkConfig('snk') },
  });
}

const sourceOffset = { partition: { filename: '/tmp/in.txt' }, offset: { position: 42 } };
const sinkOffset = {
  partition: { kafka_topic: 'lines', kafka_partition: 0 },
  offset: { kafka_offset: 17 },
};

describe('/connectors/{name}/offsets', () => {
  it('GET answers source offsets as {partition, offset} and sink offsets as kafka_* fields', async () => {
    await withConnectors();
    f.herder.setOffsets('src', [sourceOffset]);
    f.herder.setOffsets('snk', [sinkOffset]);
    const src = await f.app.inject({ method: 'GET', url: '/connectors/src/offsets' });
    expect(src.statusCode).toBe(200);
    expect(src.json()).toEqual({ offsets: [sourceOffset] });
    const snk = await f.app.inject({ method: 'GET', url: '/connectors/snk/offsets' });
    expect(snk.json()).toEqual({ offsets: [sinkOffset] });
  });

  it('PATCH and DELETE are refused with 400 while the connector is not STOPPED', async () => {
    await withConnectors();
    const message =
      "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/src/stop' endpoint";
    const patch = await f.app.inject({
      method: 'PATCH',
      url: '/connectors/src/offsets',
      payload: { offsets: [sourceOffset] },
    });
    expect(patch.statusCode).toBe(400);
    expect(patch.json()).toEqual({ error_code: 400, message });
    const del = await f.app.inject({ method: 'DELETE', url: '/connectors/src/offsets' });
    expect(del.statusCode).toBe(400);
    expect(del.json()).toEqual({ error_code: 400, message });
  });

  it('PATCH alters offsets of a STOPPED connector, null resets a partition; DELETE resets all', async () => {
    await withConnectors();
    await f.app.inject({ method: 'PUT', url: '/connectors/snk/stop' });
    const altered = await f.app.inject({
      method: 'PATCH',
      url: '/connectors/snk/offsets',
      payload: {
        offsets: [
          sinkOffset,
          { partition: { kafka_topic: 'lines', kafka_partition: 1 }, offset: { kafka_offset: 3 } },
        ],
      },
    });
    expect(altered.statusCode).toBe(200);
    expect(altered.json()).toEqual({
      message: 'The offsets for this connector have been altered successfully',
    });
    await f.app.inject({
      method: 'PATCH',
      url: '/connectors/snk/offsets',
      payload: {
        offsets: [{ partition: { kafka_topic: 'lines', kafka_partition: 1 }, offset: null }],
      },
    });
    const after = await f.app.inject({ method: 'GET', url: '/connectors/snk/offsets' });
    expect(after.json()).toEqual({ offsets: [sinkOffset] });
    const reset = await f.app.inject({ method: 'DELETE', url: '/connectors/snk/offsets' });
    expect(reset.statusCode).toBe(200);
    expect(reset.json()).toEqual({
      message: 'The offsets for this connector have been reset successfully',
    });
    expect((await f.app.inject({ method: 'GET', url: '/connectors/snk/offsets' })).json()).toEqual({
      offsets: [],
    });
  });

  it('PATCH without offsets is 400 with Connect text', async () => {
    await withConnectors();
    for (const payload of [{}, { offsets: [] }]) {
      const res = await f.app.inject({ method: 'PATCH', url: '/connectors/src/offsets', payload });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        error_code: 400,
        message: 'Partitions / offsets need to be provided for an alter offsets request',
      });
    }
  });

  it('is 404 for an unknown connector', async () => {
    await withConnectors();
    const res = await f.app.inject({ method: 'GET', url: '/connectors/nope/offsets' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error_code: 404, message: 'Connector nope not found' });
  });
});

describe('/connectors/{name}/topics', () => {
  it('GET answers {name: {topics}}; PUT reset answers 202 and empties it', async () => {
    await withConnectors();
    f.herder.setActiveTopics('src', ['lines']);
    const res = await f.app.inject({ method: 'GET', url: '/connectors/src/topics' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ src: { topics: ['lines'] } });
    const reset = await f.app.inject({ method: 'PUT', url: '/connectors/src/topics/reset' });
    expect(reset.statusCode).toBe(202);
    expect((await f.app.inject({ method: 'GET', url: '/connectors/src/topics' })).json()).toEqual({
      src: { topics: [] },
    });
  });

  it('is 403 when topic tracking is disabled', async () => {
    await withConnectors({ topicTracking: { enabled: false, allowReset: true } });
    const res = await f.app.inject({ method: 'GET', url: '/connectors/src/topics' });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error_code: 403, message: 'Topic tracking is disabled.' });
  });

  it('reset is 403 when topic tracking reset is disabled', async () => {
    await withConnectors({ topicTracking: { enabled: true, allowReset: false } });
    const res = await f.app.inject({ method: 'PUT', url: '/connectors/src/topics/reset' });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error_code: 403, message: 'Topic tracking reset is disabled.' });
  });
});
