import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { advertisedAddress } from '../../../../src/connect/herder/distributed-worker.ts';
import { workerIdOfUrl } from '../../../../src/connect/herder/rebalance-handler.ts';

describe('the address a worker gives the group', () => {
  it('is the listener host with the port actually bound', () => {
    expect(advertisedAddress({ listeners: ['http://127.0.0.1:0'] }, 'http://127.0.0.1:41234')).toBe(
      '127.0.0.1:41234',
    );
  });

  it('uses rest.advertised.host.name and rest.advertised.port when set', () => {
    const config = {
      listeners: ['http://0.0.0.0:8083'],
      'rest.advertised.host.name': 'worker-1.example',
      'rest.advertised.port': 18083,
    };
    expect(advertisedAddress(config, 'http://0.0.0.0:8083')).toBe('worker-1.example:18083');
  });

  it('names the machine when the listener binds every interface', () => {
    expect(advertisedAddress({ listeners: ['http://:8083'] }, 'http://127.0.0.1:8083')).toBe(
      `${hostname()}:8083`,
    );
  });

  it('is the worker id found in statuses (the URL without scheme and slash)', () => {
    expect(workerIdOfUrl('http://127.0.0.1:8083/')).toBe('127.0.0.1:8083');
    expect(workerIdOfUrl('https://w:1/')).toBe('w:1');
  });
});
