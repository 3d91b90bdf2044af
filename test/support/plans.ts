/**
 * Whether a query plan (its `queryPlanner`, as JSON) reads the whole collection: MongoDB's
 * COLLSCAN, or the embedded FerretDB's SQLite `SCAN <table>` (served by an index, it shows
 * `SEARCH … USING INDEX`, and MongoDB an IXSCAN, which this does not match).
 */
export const READS_EVERYTHING = /COLLSCAN|\bSCAN\b/;
