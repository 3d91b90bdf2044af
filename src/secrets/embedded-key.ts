/** Where the embedded database's secrets key is kept (src/secrets/secret-box.ts): beside the project's other local state, never committed. */
import { join } from 'node:path';
import { projectRoot } from '../lib/project-root.js';

export const embeddedSecretsKeyFile = (): string => join(projectRoot(), '.cache', 'embedded-data', 'secrets.key');
