/**
 * Postgres' geometric types and PostGIS values to Debezium's geometry structs
 * (io.debezium.data.geometry.*, PostgresValueConverter.convertPoint ... convertLine and
 * convertGeometry / convertGeography):
 *   point               Point {x, y, wkb: WKB POINT, srid: null}
 *   box                 Geometry {wkb: POLYGON of the ring (x1,y1) (x1,y2) (x2,y2) (x2,y1)
 *                       (x1,y1), corners in the order Postgres writes them; extensions
 *                       {type: box}}
 *   lseg                Geometry {wkb: LINESTRING of its two points; {type: lseg}}
 *   path                Geometry {wkb: LINESTRING of its points; {type: path, closed:
 *                       'true' | 'false'}} (Debezium's code; its documentation says a
 *                       closed path becomes a polygon, the code does not)
 *   polygon             Geometry {wkb: POLYGON of its points, the ring closed by repeating
 *                       the first point unless it is already last; {type: polygon}}
 *   circle              Circle {center: Point, radius}
 *   line                Line {a, b, c} of Ax + By + C = 0
 *   PostGIS geometry    Geometry {wkb: the EWKB bytes Postgres writes as hex, srid: the
 *                       SRID in the EWKB header or null; extensions null}
 *   PostGIS geography   Geography {wkb, srid}, the same way
 * WKB is OGC's: byte order byte 1 (little endian), uint32 type (1 point, 2 line string,
 * 3 polygon), uint32 counts, float64 coordinates. Text forms are Postgres' output with
 * extra_float_digits=1 (SESSION_OPTIONS): coordinates in shortest exact form, 'NaN',
 * 'Infinity', '-Infinity' included, which Number() reads as the same doubles.
 */
import { type Schema, Schemas } from '../../../src/connect/api/index.ts';

const POINT_SCHEMA: Schema = Schemas.struct(
  [
    ['x', Schemas.float64()],
    ['y', Schemas.float64()],
    ['wkb', Schemas.bytes({ optional: true })],
    ['srid', Schemas.int32({ optional: true })],
  ],
  { name: 'io.debezium.data.geometry.Point', version: 1, doc: 'Geometry (POINT)' },
);

export const GeometricSchemas = {
  Point: POINT_SCHEMA,
  Geometry: Schemas.struct(
    [
      ['wkb', Schemas.bytes()],
      ['srid', Schemas.int32({ optional: true })],
      ['extensions', Schemas.map(Schemas.string(), Schemas.string(), { optional: true })],
    ],
    { name: 'io.debezium.data.geometry.Geometry', version: 2, doc: 'Geometry', optional: true },
  ),
  Geography: Schemas.struct(
    [
      ['wkb', Schemas.bytes()],
      ['srid', Schemas.int32({ optional: true })],
    ],
    { name: 'io.debezium.data.geometry.Geography', version: 1, doc: 'Geography' },
  ),
  Circle: Schemas.struct(
    [
      ['center', POINT_SCHEMA],
      ['radius', Schemas.float64()],
    ],
    {
      name: 'io.debezium.data.geometry.Circle',
      version: 1,
      doc: 'Geometry (CIRCLE)',
      optional: true,
    },
  ),
  Line: Schemas.struct(
    [
      ['a', Schemas.float64()],
      ['b', Schemas.float64()],
      ['c', Schemas.float64()],
    ],
    { name: 'io.debezium.data.geometry.Line', version: 1, doc: 'Geometry (LINE)', optional: true },
  ),
} as const;

type Xy = [number, number];

const NUMBER = /-?(?:Infinity|NaN|\d+(?:\.\d*)?(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?)/gi;

/** Every coordinate of a geometric text, in order. */
function numbers(text: string): number[] {
  return (text.match(NUMBER) ?? []).map(Number);
}

function pairs(text: string): Xy[] {
  const n = numbers(text);
  const out: Xy[] = [];
  for (let i = 0; i + 1 < n.length; i += 2) out.push([n[i], n[i + 1]]);
  return out;
}

function header(buffer: Buffer, type: number): number {
  buffer.writeUInt8(1, 0);
  buffer.writeUInt32LE(type, 1);
  return 5;
}

function writePoints(buffer: Buffer, at: number, points: Xy[]): number {
  let pos = buffer.writeUInt32LE(points.length, at);
  for (const [x, y] of points) {
    pos = buffer.writeDoubleLE(x, pos);
    pos = buffer.writeDoubleLE(y, pos);
  }
  return pos;
}

export function wkbPoint(x: number, y: number): Buffer {
  const b = Buffer.alloc(21);
  const at = header(b, 1);
  b.writeDoubleLE(x, at);
  b.writeDoubleLE(y, at + 8);
  return b;
}

export function wkbLineString(points: Xy[]): Buffer {
  const b = Buffer.alloc(9 + 16 * points.length);
  writePoints(b, header(b, 2), points);
  return b;
}

export function wkbPolygon(ring: Xy[]): Buffer {
  const b = Buffer.alloc(13 + 16 * ring.length);
  const at = b.writeUInt32LE(1, header(b, 3));
  writePoints(b, at, ring);
  return b;
}

export function pointValue(text: string) {
  const [x, y] = numbers(text);
  return { x, y, wkb: wkbPoint(x, y), srid: null };
}

function geometry(wkb: Buffer, extensions: Array<[string, string]>) {
  return { wkb, srid: null, extensions: new Map(extensions) };
}

/** '(x1,y1),(x2,y2)' */
export function boxValue(text: string) {
  const [[x1, y1], [x2, y2]] = pairs(text);
  const ring: Xy[] = [
    [x1, y1],
    [x1, y2],
    [x2, y2],
    [x2, y1],
    [x1, y1],
  ];
  return geometry(wkbPolygon(ring), [['type', 'box']]);
}

/** '[(x1,y1),(x2,y2)]' */
export function lsegValue(text: string) {
  return geometry(wkbLineString(pairs(text)), [['type', 'lseg']]);
}

/** '[(x,y),...]' open, '((x,y),...)' closed. */
export function pathValue(text: string) {
  return geometry(wkbLineString(pairs(text)), [
    ['type', 'path'],
    ['closed', String(text.trimStart().startsWith('('))],
  ]);
}

/** '((x,y),...)' */
export function polygonValue(text: string) {
  const ring = pairs(text);
  const first = ring[0];
  const last = ring[ring.length - 1];
  if (ring.length >= 2 && (first[0] !== last[0] || first[1] !== last[1]))
    ring.push([first[0], first[1]]);
  return geometry(wkbPolygon(ring), [['type', 'polygon']]);
}

/** '<(x,y),r>' */
export function circleValue(text: string) {
  const [x, y, radius] = numbers(text);
  return { center: { x, y, wkb: wkbPoint(x, y), srid: null }, radius };
}

/** '{a,b,c}' */
export function lineValue(text: string) {
  const [a, b, c] = numbers(text);
  return { a, b, c };
}

/** EWKB type flag: an SRID follows the type (PostGIS' extension of WKB). */
const EWKB_SRID = 0x20000000;

/**
 * A PostGIS geometry or geography text (hex EWKB) as Debezium sends it: the EWKB bytes
 * themselves (SRID flag and all, as PostgisGeometry.fromHexEwkb keeps them) and the SRID,
 * or null without one. Throws on text that is not hex EWKB.
 */
export function postgisValue(text: string): { wkb: Buffer; srid: number | null } {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(text) || text.length < 18)
    throw new Error(`not hex EWKB: ${JSON.stringify(text.slice(0, 40))}`);
  const wkb = Buffer.from(text, 'hex');
  const little = wkb[0] !== 0;
  const type = little ? wkb.readUInt32LE(1) : wkb.readUInt32BE(1);
  const srid = type & EWKB_SRID ? (little ? wkb.readInt32LE(5) : wkb.readInt32BE(5)) : null;
  return { wkb, srid };
}
