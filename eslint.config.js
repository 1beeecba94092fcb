import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'bench/results/', 'sdk/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // The dashboard's browser modules (plain ES modules, served as they are): browser globals.
    files: ['src/dashboard/ui/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries([
        'window', 'document', 'location', 'sessionStorage', 'fetch', 'addEventListener', 'removeEventListener',
        'dispatchEvent', 'CustomEvent', 'URLSearchParams', 'TextDecoderStream', 'AbortController', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval',
        'FormData', 'console', 'navigator',
      ].map((name) => [name, 'readonly'])),
    },
  },
  {
    // The platform is told what the groups add (job kinds, schedules, event consumers: see
    // src/app.ts), so it can be read, tested and changed without them.
    files: ['src/platform/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)(resources|orgs|dashboard)/', message: 'src/platform/ imports nothing from the groups: have the app tell it (see src/app.ts).' }] }],
    },
  },
  {
    // Migrations are frozen: a released one must build the same schema forever.
    files: ['src/db/migrations/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)(platform|resources|orgs)/', message: 'A migration imports no kernel or group code: use (or add) a frozen helper in src/db/migration-helpers.ts.' }] }],
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
);
