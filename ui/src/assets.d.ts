// esbuild bundles imported stylesheets into app.css; to the type checker they are nothing.
declare module '*.css';
