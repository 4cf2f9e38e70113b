/**
 * Data loading (METHOD.md §1): the public surface of lib/data — dataset adapters and their registry, datasets, examples, schema text,
 * database discovery, gold files, and official archive download/extraction.
 * @module
 */
export type { Dataset, DatasetName, DatabaseFiles, Example } from "./types.ts";
export type { DatasetAdapter, DatasetLayout, RecordFields, ScoringSpec } from "./adapter.ts";
export { DATASETS, registerDataset, datasetAdapter, datasetNames, DatasetNameSchema } from "./datasets/index.ts";
export { loadDataset, datasetChecksum, missingDatabases, layoutOf, databaseRootsOf, type LoadDatasetOptions, type MissingDatabase } from "./dataset.ts";
export { parseExamples, assertAllValid, type InvalidExample, type ParsedExamples } from "./examples.ts";
export { parseTablesEntry, renderSchema, TablesEntrySchema, SchemaEntryError, type TablesEntry, type PrimaryKeyItem } from "./schema-text.ts";
export { discoverDatabases, discoverDatabaseRoots, databaseManifestHash, groupByDbId, databaseSetShape, type DatabaseDiscovery, type DatabaseSetShape, type ManifestEntry } from "./databases.ts";
export { fileDigest, sha256File, type FileDigest } from "../file-hash.ts";
export { readGoldFile, assertGoldAgrees, type GoldLine } from "./gold-file.ts";
export { readJsonFile, type JsonFile } from "./json-file.ts";
export { fetchArchive, verifyArchive, confirmationUrl, DownloadError, UnpinnedHashError, type FetchArchiveOptions } from "./download.ts";
export { readDownloadLock, writeDownloadLockEntry, type LockEntry } from "./download-lock.ts";
export { readArchiveEntry, ArchiveEntrySchema, type ArchiveEntry } from "./downloads.ts";
export { extractArchive, unzip, assertUnzipAvailable, type ExtractOptions, type InstallReport } from "./extract.ts";
