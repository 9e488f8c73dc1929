/** esbuild bundles imported CSS into its own file. */
declare module '*.css';
/** The favicon's SVG as text (esbuild's text loader), for drawing the count badge on it. */
declare module '*.svg' {
  const text: string;
  export default text;
}
