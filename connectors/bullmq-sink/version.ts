/** The BullMQ plugin's version, reported in status and /connector-plugins. */
export const BULLMQ_SINK_VERSION = '0.1.0';
