// esbuild bundles the style sheets a module imports into the console's one CSS file.
declare module '*.css';
