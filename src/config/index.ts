export { parsePostUrl, resolveCredentials, resolveSelection, resolveSigningKey, type Selection } from './resolve.js';
export { readSchemaCache, SCHEMA_TTL_MS, schemaCachePath, writeSchemaCache } from './schema-cache.js';
export { type CardboardConfig, configDir, configPath, emptyConfig, readConfig, type StoredBoard, storedBoard, updateConfig } from './store.js';
