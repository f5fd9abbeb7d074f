// Lint rules of the visitor script (`npm run lint`, run by `cargo xtask test`):
// ESLint's and typescript-eslint's recommended sets. Types are checked
// separately by `npm run check` (tsc --noEmit).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts'],
    languageOptions: {
      parserOptions: { ecmaVersion: 2020, sourceType: 'module' },
    },
  },
);
