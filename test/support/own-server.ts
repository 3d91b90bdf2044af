/**
 * A database server of a test file's own, for the files that write 100,000 documents or more:
 * large-deletes' 120,000 kept the shared embedded FerretDB busy after the file ended, and the next
 * file's writes hung behind it. The service the file starts on it, and the server, are closed by
 * the returned `close`.
 */
import { loadConfig } from '../../src/config.js';
import { startEmbeddedDatabase } from '../../src/db/embedded.js';
import { createLogger } from '../../src/logger.js';
import { startTestService, type TestService, type TestServiceOptions } from './service.js';

export async function serviceOnOwnServer(options: TestServiceOptions = {}): Promise<TestService> {
  const config = loadConfig();
  const server = await startEmbeddedDatabase(config.embeddedEngine, config.downloadProxy, createLogger('silent'));
  const service = await startTestService({ ...options, serverUri: server.uri });
  return {
    ...service,
    async close() {
      await service.close();
      await server.stop();
    },
  };
}
