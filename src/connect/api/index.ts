/**
 * The connector API: everything a plugin may import. Plugins under connectors/ (ours
 * and third parties') import from this module only, so the runtime behind it can
 * change freely.
 */
export * from '../../config/config-def.ts';
export * from './schema.ts';
