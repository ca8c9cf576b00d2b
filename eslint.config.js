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
    files: ['src/cli/**', 'bench/**', 'chaos/**', 'bin/**', 'src/sandbox/**/main.ts', 'scripts/**'],
    rules: { 'no-console': 'off' },
  },
  prettier,
);
