export const FILE_CONNECTOR_VERSION = '1.0.0';
