import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Document } from 'openapi-backend';
import { projectRoot } from './project-root.js';

export const SPEC_PATH = join(projectRoot(), 'openapi', 'openapi.yaml');

/** A fresh copy of the spec, parsed from openapi/openapi.yaml (or another copy of it). */
export function loadSpec(path = SPEC_PATH): Document {
  return parse(readFileSync(path, 'utf8')) as Document;
}
