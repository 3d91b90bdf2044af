// Loaded with `node --import`: makes mongodb-memory-server unresolvable, as it is in an install
// without dev dependencies (the image), so a test can run the service the way the image runs it.
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (/^mongodb-memory-server(-core)?(\/|$)/.test(specifier)) {
      const error = new Error(`Cannot find package '${specifier}' (left out, as by npm ci --omit=dev)`);
      error.code = 'ERR_MODULE_NOT_FOUND';
      throw error;
    }
    return nextResolve(specifier, context);
  },
});
