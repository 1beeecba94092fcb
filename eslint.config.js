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
        'FormData', 'console',
      ].map((name) => [name, 'readonly'])),
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
);
