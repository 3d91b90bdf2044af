/**
 * What the server can guarantee, decided once per connection (docs/design.md §8): code asks these,
 * and the engine workarounds (workarounds.ts) follow from them.
 */
import type { Db } from 'mongodb';

/** What the server guarantees; code asks these, never which engine it is. */
export interface Capabilities {
  /** TTL indexes expire documents by themselves (FerretDB v1: no). */
  readonly ttlIndexes: boolean;
  /** A conditional update is atomic against a concurrent one from another process (FerretDB v1: no). */
  readonly atomicConditionalUpdate: boolean;
  /** Writes from several connections proceed in parallel (FerretDB's SQLite backend: one writer per database). */
  readonly parallelWriters: boolean;
  /** A query on an indexed field other than `_id` is served by its index (FerretDB's SQLite backend pushes down only `_id`). */
  readonly secondaryIndexes: boolean;
  /** findAndModify takes a projection (the driver's `projection` option of findOneAndUpdate; FerretDB v1: no, "fields" is not implemented). */
  readonly updateProjection: boolean;
  /** One statement may remove any number of documents (FerretDB's SQLite backend binds a SQL variable per document a delete removes, and SQLite takes at most 32,766). */
  readonly largeStatements: boolean;
}

/** Which server answered, for logs and reports only: code branches on Capabilities. */
export interface ServerInfo {
  readonly engine: 'ferretdb' | 'mongodb';
  readonly version: string;
}

/** FerretDB answers buildInfo with its own version fields; it is the one engine known to lack these. */
export async function detectCapabilities(db: Db): Promise<{ capabilities: Capabilities; server: ServerInfo }> {
  const buildInfo = await db.admin().command({ buildInfo: 1 });
  const ferretdb = 'ferretdbVersion' in buildInfo || 'ferretdb' in buildInfo;
  const server: ServerInfo = { engine: ferretdb ? 'ferretdb' : 'mongodb', version: String(buildInfo.version) };
  return {
    capabilities: {
      ttlIndexes: !ferretdb,
      atomicConditionalUpdate: !ferretdb,
      parallelWriters: !ferretdb,
      secondaryIndexes: !ferretdb,
      updateProjection: !ferretdb,
      largeStatements: !ferretdb,
    },
    server,
  };
}
