/** openapi-generator-cli as scripts/generate.ts and scripts/clients/generate.ts run it (jar pinned in openapitools.json). */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { projectRoot } from '../src/lib/project-root.js';
import { DRY_RUN_200_OPERATIONS } from './mock-spec.js';
import { runQuietly } from './run-quietly.js';

export const TEMPLATES = join(projectRoot(), 'openapi', 'generator-templates');

/**
 * The spec the clients are generated from. They call the service, so it has no `webhooks`
 * (requests the service sends, which typescript-fetch renders as broken API methods; their payload
 * types are in generated/openapi.d.ts). The bulk operations keep their 202 as their return type:
 * typescript-fetch types a method by its lowest 2xx, which would make every bulk call return the
 * deprecated dry run's 200. A dry run is the preview methods' (previewBulkPause, previewBulkResume).
 */
export function clientSpec(specPath: string, dir: string, adapt?: (document: Record<string, unknown>) => void): string {
  const document = parse(readFileSync(specPath, 'utf8')) as Record<string, unknown>;
  adapt?.(document);
  delete document.webhooks;
  const paths = document.paths as Record<string, { post?: { operationId?: string; responses?: Record<string, unknown> } }>;
  for (const { post } of Object.values(paths))
    if (post?.operationId && (DRY_RUN_200_OPERATIONS as readonly string[]).includes(post.operationId)) delete post.responses?.['200'];
  const out = join(dir, 'client-spec.yaml');
  writeFileSync(out, stringify(document));
  return out;
}

/** `openapi-generator-cli ARGS`, quiet unless it fails (then its whole report). */
export function runOpenapiGenerator(args: readonly string[]): void {
  const root = projectRoot();
  // The first run downloads the jar from Maven Central. The Node installed from npm trusts only the
  // CAs built into it, where a distribution's Node trusts the system's: ask for the system's, so
  // that a proxy or mirror the machine trusts works here too (older Nodes ignore the variable).
  const env = { ...process.env, PWD: root, NODE_USE_SYSTEM_CA: '1' };
  runQuietly(join(root, 'node_modules', '.bin', 'openapi-generator-cli'), args, { cwd: root, env });
}
