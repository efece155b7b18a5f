import { describe, expect, it } from 'vitest';
import { WindowedRate, WindowedStat } from '../../../src/connect/metrics/windowed-stat.ts';
import { ManualClock } from '../../../src/util/clock.ts';

describe('WindowedStat', () => {
  it('reports NaN without samples, as Kafka does', () => {
    const stat = new WindowedStat(new ManualClock(0), 1000);
    expect(stat.avg()).toBeNaN();
    expect(stat.minValue()).toBeNaN();
    expect(stat.maxValue()).toBeNaN();
  });

  it('averages, minimises and maximises the current and the previous window, forgetting older ones', () => {
    const clock = new ManualClock(0);
    const stat = new WindowedStat(clock, 1000);
    stat.record(10);
    stat.record(30);
    expect(stat.avg()).toBe(20);
    clock.advance(1000);
    stat.record(2); // the read above rolled nothing; this one lands in the same window
    expect(stat.avg()).toBe(14); // rolled now: [10, 30, 2] is the previous window
    expect(stat.maxValue()).toBe(30);
    expect(stat.minValue()).toBe(2);
    clock.advance(1000);
    stat.record(4);
    expect(stat.avg()).toBe(4); // rolled again: the first window is gone, [4] moved to previous
    expect(stat.maxValue()).toBe(4);
    expect(stat.minValue()).toBe(4);
  });
});

describe('WindowedRate', () => {
  it('is the growth per second since the previous window started', () => {
    const clock = new ManualClock(0);
    const rate = new WindowedRate(clock, 1000);
    clock.advance(500);
    expect(rate.read(100)).toBe(200);
    clock.advance(500);
    expect(rate.read(300)).toBe(300); // marks a window at t=1000, rate over [0, 1000]
    clock.advance(1000);
    expect(rate.read(300)).toBe(0); // marks t=2000; over [1000, 2000] nothing grew
  });
});
