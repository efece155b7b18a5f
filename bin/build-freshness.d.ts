/** Whether dist/ was built after the last change to any file it is built from. */
export function buildIsFresh(root: string): boolean;
