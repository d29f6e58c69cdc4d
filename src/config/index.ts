export { aliasAdvice, describeOrigin, type Origin, parsePostUrl, resolveCredentials, resolveSelection, resolveSigningKey, type Selection, tokenHints } from './resolve.js';
export { cachedFieldNames, readSchemaCache, SCHEMA_TTL_MS, schemaCachePath, writeSchemaCache } from './schema-cache.js';
export { cacheDir, type CardboardConfig, configDir, configPath, type ConfigStore, configStore, emptyConfig, type StoredBoard, storedBoard } from './store.js';
