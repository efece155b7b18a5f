export const DATAGEN_VERSION = '1.0.0';
