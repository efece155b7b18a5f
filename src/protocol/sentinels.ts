/**
 * Values Kafka's protocol gives a meaning of their own, used by the codec's defaults
 * and by the broker's answers alike.
 */

/** The zero UUID: "no topic id" (a topic named by name, or an unknown one). */
export const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

/** Authorized operations the client did not ask for (INT32_MIN). */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;
