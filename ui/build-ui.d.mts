// Types of build-ui.mjs for the worker's TypeScript (src/connect/rest/ui-bundle.ts).
export declare const uiRoot: string;
export declare const uiSourceDir: string;
export declare const uiDistDir: string;
export declare const STAMP: string;
export declare function newestSourceMtime(dir?: string): number;
export declare function bundleUi(): Promise<Map<string, Uint8Array>>;
export declare function buildUiDist(): Promise<string[]>;
