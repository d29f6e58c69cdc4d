export { parsePostUrl, resolveCredentials, resolveSelection, resolveSigningKey, type Selection } from './resolve.js';
export { readSchemaCache, SCHEMA_TTL_MS, schemaCachePath, writeSchemaCache } from './schema-cache.js';
export { type CardboardConfig, configDir, configPath, readConfig, type StoredBoard, updateConfig } from './store.js';
