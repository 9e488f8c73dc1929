/** esbuild bundles imported CSS into its own file. */
declare module '*.css';
