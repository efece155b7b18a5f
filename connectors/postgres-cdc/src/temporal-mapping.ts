/**
 * date, time, timestamp and interval columns per time.precision.mode and
 * interval.handling.mode, as Debezium's TemporalPrecisionMode and JdbcValueConverters
 * (convertDate / convertTime / convertTimestamp) with PostgresValueConverter's overrides
 * choose them. p is the column's fractional-second precision (6 when not given):
 *   mode                        date      time(p)                 timestamp(p)
 *   adaptive                    Date      p<=3 Time, else MicroTime p<=3 Timestamp, else MicroTimestamp
 *   adaptive_time_microseconds  Date      MicroTime               as adaptive
 *   connect                     Kafka Date  Kafka Time (ms)       Kafka Timestamp (ms)
 *   isostring                   IsoDate   IsoTime                 IsoTimestamp
 *   microseconds                Date      MicroTime               MicroTimestamp
 *   nanoseconds                 Date      NanoTime                NanoTimestamp
 * (Debezium's adaptive modes pick NanoTime / NanoTimestamp past p=6, which Postgres
 * never has.) timestamptz and timetz are ZonedTimestamp and ZonedTime in every mode, and
 * so is every array of them. Debezium 3.x also has `structured` (structs of calendar and
 * clock fields); it is not implemented, and time.precision.mode refuses it by name.
 * Value formats and infinities: temporal-text.ts.
 */
import { Schemas } from '../../../src/connect/api/index.ts';
import {
  type ColumnMapping,
  type ColumnRef,
  DebeziumNames,
  type MappingModes,
  named,
  UnrepresentableValueError,
} from './mapping-types.ts';
import {
  formatIntervalString,
  formatIsoDate,
  formatIsoTime,
  formatIsoTimestamp,
  formatZonedTime,
  formatZonedTimestampText,
  NanosOutOfRangeError,
  parseDateDays,
  parseIntervalMicros,
  parseTimeMicros,
  parseTimeNanos,
  parseTimestampMicros,
  parseTimestampMillis,
  parseTimestampNanos,
} from './temporal-text.ts';

/** Time typmod is the fractional-second precision; -1 means the default, 6. */
function precisionOf(typmod: number): number {
  return typmod < 0 ? 6 : typmod;
}

const timeMillis = (s: string) => Math.floor(parseTimeMicros(s) / 1000);

const micros = {
  schema: named(Schemas.int64(), DebeziumNames.MicroTime, 1),
  fromText: parseTimeMicros,
};
const microTimestamp = {
  schema: named(Schemas.int64(), DebeziumNames.MicroTimestamp, 1),
  fromText: parseTimestampMicros,
};

/** The mapping of a date, time, timestamp[tz], timetz or interval column; null for others. */
export function temporalMapping(
  name: string,
  typmod: number,
  modes: MappingModes,
  where: ColumnRef,
): ColumnMapping | null {
  const mode = modes.timePrecisionMode;
  switch (name) {
    case 'date':
      if (mode === 'connect') return { schema: Schemas.date(), fromText: parseDateDays };
      if (mode === 'isostring')
        return {
          schema: named(Schemas.string(), DebeziumNames.IsoDate, 1),
          fromText: formatIsoDate,
        };
      return { schema: named(Schemas.int32(), DebeziumNames.Date, 1), fromText: parseDateDays };
    case 'time':
      switch (mode) {
        case 'connect':
          return { schema: Schemas.time(), fromText: timeMillis };
        case 'isostring':
          return {
            schema: named(Schemas.string(), DebeziumNames.IsoTime, 1),
            fromText: formatIsoTime,
          };
        case 'nanoseconds':
          return {
            schema: named(Schemas.int64(), DebeziumNames.NanoTime, 1),
            fromText: parseTimeNanos,
          };
        case 'microseconds':
        case 'adaptive_time_microseconds':
          return micros;
        case 'adaptive':
          return precisionOf(typmod) > 3
            ? micros
            : { schema: named(Schemas.int32(), DebeziumNames.Time, 1), fromText: timeMillis };
      }
      break;
    case 'timestamp':
      switch (mode) {
        case 'connect':
          return { schema: Schemas.timestamp(), fromText: parseTimestampMillis };
        case 'isostring':
          return {
            schema: named(Schemas.string(), DebeziumNames.IsoTimestamp, 1),
            fromText: formatIsoTimestamp,
          };
        case 'nanoseconds':
          return {
            schema: named(Schemas.int64(), DebeziumNames.NanoTimestamp, 1),
            fromText: (s) => {
              try {
                return parseTimestampNanos(s);
              } catch (error) {
                if (!(error instanceof NanosOutOfRangeError)) throw error;
                throw new UnrepresentableValueError(
                  where,
                  s,
                  `${error.message}: time.precision.mode=nanoseconds covers 1677-09-21T00:12:43Z to ` +
                    '2262-04-11T23:47:16Z. Set time.precision.mode=microseconds or isostring, which ' +
                    'cover every timestamp Postgres has',
                );
              }
            },
          };
        case 'microseconds':
          return microTimestamp;
        case 'adaptive':
        case 'adaptive_time_microseconds':
          return precisionOf(typmod) > 3
            ? microTimestamp
            : {
                schema: named(Schemas.int64(), DebeziumNames.Timestamp, 1),
                fromText: parseTimestampMillis,
              };
      }
      break;
    case 'timestamptz':
      return {
        schema: named(Schemas.string(), DebeziumNames.ZonedTimestamp, 1),
        fromText: formatZonedTimestampText,
      };
    case 'timetz':
      return {
        schema: named(Schemas.string(), DebeziumNames.ZonedTime, 1),
        fromText: formatZonedTime,
      };
    case 'interval':
      return modes.intervalHandlingMode === 'string'
        ? {
            schema: named(Schemas.string(), DebeziumNames.Interval, 1),
            fromText: formatIntervalString,
          }
        : {
            schema: named(Schemas.int64(), DebeziumNames.MicroDuration, 1),
            fromText: parseIntervalMicros,
          };
  }
  return null;
}
