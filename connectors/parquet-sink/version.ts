/** Reported in status and /connector-plugins; bump with behaviour changes. */
export const PARQUET_SINK_VERSION = '0.1.0';
