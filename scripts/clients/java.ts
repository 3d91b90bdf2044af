/**
 * The Java client's part of the clients suite (scripts/clients/test.ts):
 *   the jar built by Maven from a copy of clients/java (once per content of clients/java: kept in
 *   .cache/java-client/<hash>/ and reused while the sources do not change), copied with its pom to clients/dist/,
 *   then installed from there into the local Maven repository as a merchant would
 *   (`mvn install:install-file`); a scratch Maven project depending on it runs clients/scenarios/java
 *   with JUnit 5, its Surefire reports merged into one JUnit report.
 * Maven's local repository is .cache/m2: the first run downloads the plugins and dependencies from
 * Maven Central (about 60 MB, once); later runs are offline (`mvn -o`). CI keeps .cache/ between runs.
 * Skipped, with the reason printed, where the machine has no Java 11+ or no Maven.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { projectRoot } from '../../src/lib/project-root.js';
import { runCollected } from '../run-quietly.js';
import { JAVA_ARTIFACT } from './generate.js';

const ROOT = projectRoot();
const CLIENT = join(ROOT, 'clients', 'java');
export const MAVEN_REPOSITORY = join(ROOT, '.cache', 'm2');
const BUILT = join(ROOT, '.cache', 'java-client');
const JUNIT_VERSION = '5.10.2';

/** Why the Java scenarios cannot run here, or undefined when `java` and `mvn` are on the PATH. */
export function javaMissing(): string | undefined {
  for (const [command, args] of [
    ['java', ['-version']],
    ['mvn', ['-v']],
  ] as const) {
    try {
      execFileSync(command, args, { stdio: 'ignore' });
    } catch {
      return `no \`${command}\` on the PATH: the Java client is neither built nor run (install Java 11+ and Maven 3.8+ to run it)`;
    }
  }
  return undefined;
}

/**
 * `mvn ARGS` in cwd against .cache/m2: offline first; where something is not in the cache yet
 * (the first run), once more online, saying so. Throws with Maven's report when it fails.
 */
async function maven(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const common = ['-B', `-Dmaven.repo.local=${MAVEN_REPOSITORY}`, ...args];
  let { status, output } = await runCollected('mvn', ['-o', ...common], { cwd, env });
  if (status !== 0 && /offline mode|has not been downloaded/.test(output)) {
    console.log(`Maven: downloading what ${relative(ROOT, MAVEN_REPOSITORY)}/ lacks from Maven Central (first run only)`);
    ({ status, output } = await runCollected('mvn', common, { cwd, env }));
  }
  if (status !== 0 && !args.includes('test')) throw new Error(`mvn ${args.join(' ')} failed in ${cwd}:\n${output}`);
  return output;
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => statSync(join(dir, f)).isFile())
    .sort();
}

/** A digest of clients/java, the build's only input besides the cached dependencies. */
function sourcesDigest(): string {
  const hash = createHash('sha256');
  for (const file of listFiles(CLIENT))
    hash
      .update(file)
      .update('\0')
      .update(readFileSync(join(CLIENT, file)))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** The jar and its pom, built afresh only when clients/java changed since the last build. */
async function builtJar(version: string): Promise<{ jar: string; pom: string }> {
  const name = `${JAVA_ARTIFACT.artifactId}-${version}`;
  const cached = join(BUILT, sourcesDigest());
  const jar = join(cached, `${name}.jar`);
  const pom = join(cached, `${name}.pom`);
  if (existsSync(jar) && existsSync(pom)) return { jar, pom };
  const copy = mkdtempSync(join(tmpdir(), 'subsvc-java-build-'));
  try {
    cpSync(CLIENT, copy, { recursive: true });
    await maven(['-q', 'package'], copy);
    rmSync(BUILT, { recursive: true, force: true });
    mkdirSync(cached, { recursive: true });
    cpSync(join(copy, 'target', `${name}.jar`), jar);
    cpSync(join(copy, 'pom.xml'), pom);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
  return { jar, pom };
}

/** The scratch project's pom: the client from the local repository, JUnit 5, the plugins the client's own build pins. */
function scenarioPom(version: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>merchant</groupId>
  <artifactId>merchant-scenarios</artifactId>
  <version>1</version>
  <properties>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
    <maven.compiler.release>11</maven.compiler.release>
  </properties>
  <dependencies>
    <dependency>
      <groupId>${JAVA_ARTIFACT.groupId}</groupId>
      <artifactId>${JAVA_ARTIFACT.artifactId}</artifactId>
      <version>${version}</version>
    </dependency>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <version>${JUNIT_VERSION}</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>3.5.2</version></plugin>
    </plugins>
  </build>
</project>
`;
}

/** The jar and its pom in `dist` (clients/dist/), where docs/clients-java.md installs them from. */
export async function javaDist(version: string, dist: string): Promise<{ jar: string; pom: string }> {
  const built = await builtJar(version);
  const jar = join(dist, `${JAVA_ARTIFACT.artifactId}-${version}.jar`);
  const pom = join(dist, `${JAVA_ARTIFACT.artifactId}-${version}.pom`);
  mkdirSync(dist, { recursive: true });
  cpSync(built.jar, jar);
  cpSync(built.pom, pom);
  return { jar, pom };
}

/**
 * The jar in clients/dist/, installed from there into the local repository, and a scratch project
 * with the scenarios depending on it; its dependencies and test classes resolved and compiled once
 * (`mvn test-compile`), so that each target's run only runs them.
 */
export async function javaProject(version: string, dist: string): Promise<string> {
  const { jar, pom } = await javaDist(version, dist);
  const dir = mkdtempSync(join(tmpdir(), 'subsvc-merchant-java-'));
  await maven(['-q', `org.apache.maven.plugins:maven-install-plugin:3.1.3:install-file`, `-Dfile=${jar}`, `-DpomFile=${pom}`], dir);
  writeFileSync(join(dir, 'pom.xml'), scenarioPom(version));
  const tests = join(dir, 'src', 'test', 'java', 'scenarios');
  mkdirSync(tests, { recursive: true });
  for (const file of readdirSync(join(ROOT, 'clients', 'scenarios', 'java')))
    cpSync(join(ROOT, 'clients', 'scenarios', 'java', file), join(tests, file));
  await maven(['-q', 'test-compile'], dir);
  return dir;
}

/** Surefire's reports (one per class) as one JUnit report, and one line per test for the console. */
export function mergedSurefire(reports: readonly string[]): { xml: string; lines: string[] } {
  const cases: string[] = [];
  const lines: string[] = [];
  for (const report of reports) {
    for (const [whole, attributes, body = ''] of report.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
      cases.push(whole);
      const name = /\bname="([^"]*)"/.exec(attributes!)?.[1] ?? '?';
      const word = /<(failure|error)\b/.test(body) ? 'FAILED' : /<skipped\b/.test(body) ? 'skipped' : 'passed';
      const why = /<(?:failure|error)\b[^>]*message="([^"]*)"/.exec(body)?.[1];
      lines.push(`  ${name} ${word}${why ? `: ${why}` : ''}`);
    }
  }
  return { xml: `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="java scenarios">\n${cases.join('\n')}\n</testsuite>\n`, lines };
}

/** Runs the scenarios against the target file's service or mock; leaves a JUnit report at `report`. */
export async function runJavaScenarios(project: string, targetFile: string, report: string, consoleFile: string): Promise<void> {
  const reports = join(project, 'target', 'surefire-reports');
  rmSync(reports, { recursive: true, force: true });
  const output = await maven(['surefire:test', '-DtrimStackTrace=true'], project, { ...process.env, SUBSVC_TARGET: targetFile });
  writeFileSync(consoleFile, output);
  const files = existsSync(reports) ? readdirSync(reports).filter((f) => /^TEST-.*\.xml$/.test(f)) : [];
  const { xml, lines } = mergedSurefire(files.map((f) => readFileSync(join(reports, f), 'utf8')));
  // No test ran (the scenarios did not compile): no report, which the suite counts as a failure.
  if (lines.length > 0) writeFileSync(report, xml);
  console.log(lines.length > 0 ? lines.join('\n') : output);
  console.log(`Maven's full console: ${relative(ROOT, consoleFile)}`);
}
