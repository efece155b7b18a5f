/**
 * lz4 at KIP-390's levels (lz4-hc.ts, for compression.lz4.level other than 9) next to
 * lz4-napi's fast encoder, which serves the default level 9 as Kafka's fast compressor does:
 * MB/s of input and the compressed size, per level, on BENCH_MB (default 8) MB of
 * JSON-like records. Prints `name: value unit` lines.
 * Run: npx tsx bench/broker/lz4-levels.ts
 */
import { compressFrameSync } from 'lz4-napi';
import { lz4FrameAtLevel } from '../../src/protocol/lz4-hc.ts';

const MB = Number(process.env.BENCH_MB ?? 8);
const lines: string[] = [];
for (let i = 0, bytes = 0; bytes < MB * 1_000_000; i++) {
  const line = `{"id":${i},"name":"user ${i % 997}","score":${(i * 7919) % 1000},"at":"2026-12-03T10:${String(i % 60).padStart(2, '0')}:00Z"}`;
  lines.push(line);
  bytes += line.length + 1;
}
const data = Buffer.from(lines.join('\n'));

function measure(name: string, encode: (b: Buffer) => Buffer): void {
  encode(data); // warm up the JIT
  const start = process.hrtime.bigint();
  const out = encode(data);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(`${name} rate: ${(data.length / 1e6 / seconds).toFixed(1)} MB/s`);
  console.log(`${name} ratio: ${(out.length / data.length).toFixed(3)} of input`);
}

measure("lz4-napi (the default level 9, as Kafka's fast compressor)", compressFrameSync);
for (const level of [1, 3, 6, 8, 12]) {
  measure(`lz4-hc level ${level}`, (b) => lz4FrameAtLevel(b, level));
}
