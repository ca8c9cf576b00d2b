import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', 'data/', 'coverage/', 'src/generated/', 'node_modules/'] },
  { languageOptions: { globals: { ...globals.node } } },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
  {
    // The CLI, benchmarks and sandboxes print to the terminal on purpose.
    files: [
      'src/cli/**',
      'bench/**',
      'chaos/**',
      'bin/**',
      'packages/sandboxes/src/**/main.ts',
      'packages/sandboxes/bin/**',
      'scripts/**',
    ],
    rules: { 'no-console': 'off' },
  },
  {
    // The product never loads the sandboxes (development stand-ins, not in the npm package or image).
    files: ['src/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@crm-sync/sandboxes', '@crm-sync/sandboxes/*'],
              message: 'src/ is production code: the sandboxes are a development package',
            },
          ],
        },
      ],
    },
  },
  {
    // The sandboxes depend on nothing in the product: they stand in for the vendors' APIs.
    files: ['packages/sandboxes/src/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/../../../*', 'crm-sync', 'crm-sync/*'],
              message: 'the sandboxes import nothing from crm-sync',
            },
          ],
        },
      ],
    },
  },
  prettier,
);
