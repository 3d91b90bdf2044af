// ESLint for the hand-written TypeScript (src/, scripts/, test/) and the few JavaScript files
// beside it. Type-aware: a promise nobody awaits or handles, or one passed where a
// callback's result is ignored, is a bug this service has had (an unhandled rejection ends a vitest
// run with 0 failed tests). Formatting is Prettier's (.prettierrc.json), not ESLint's.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  // The same exclusions as .prettierignore: generated code, build output, data and reports.
  globalIgnores([
    'generated/',
    'clients/typescript/src/',
    'clients/typescript/dist/',
    'clients/python/',
    'clients/go/',
    'clients/dist/',
    'dist/',
    'bench/results/',
    'test-artifacts/',
    '.cache/',
    // Built and run against the generated client by scripts/clients/test.ts, in a project of its
    // own: here its imports of the client do not resolve, so every type-aware rule would misfire.
    'clients/scenarios/',
  ]),
  js.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        // vitest.config.ts is outside tsconfig.json's include: it gets a default project.
        projectService: { allowDefaultProject: ['vitest.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Promises: every one awaited, returned, handled or `void`-ed on purpose.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // Unused code: an argument or a destructured sibling named with a leading _ is kept on purpose
      // (a callback's position, a field dropped from a copy).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      'no-unused-private-class-members': 'error',
      // Off: an async function with no await is how this code implements a Promise-returning
      // interface (a fixed pause policy, a fake in a test); the rule would make each a
      // Promise.resolve wrapper, and a promise's misuse is caught by the two rules above.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Off in tests: they read answers as `any` (`await res.json()`) and check them with
      // expect(), which is the type check a test needs; a cast per read would add no safety. And
      // a test sends ill-typed input on purpose (`as any`) to see it refused.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
