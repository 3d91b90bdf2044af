import type { EmbeddedDatabase } from '../../src/db/embedded.js';
import type { Engine } from './engine.js';
export async function runCompose(_engine: Engine, _tag: string, _database: EmbeddedDatabase): Promise<string> {
  return 'not yet';
}
