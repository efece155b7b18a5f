export function applyWorkerV8Flags(): void;
