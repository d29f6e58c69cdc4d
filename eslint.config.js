// Lint config: ESLint's and typescript-eslint's recommended rules (no type-aware rules, so lint stays fast).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'test/bench/out/', 'test/bench/results.json'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-control-regex': 'off',
    },
  },
  // The inspector's page: plain scripts run by the browser, not Node (Node's globals turned off, the browser's on).
  {
    files: ['src/webhook/inspector/page/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: { ...Object.fromEntries(Object.keys(globals.node).map((name) => [name, 'off'])), ...globals.browser },
    },
  },
);
