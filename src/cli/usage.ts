/** Arguments the operator must correct (a missing option, an unknown id): the CLI exits 2. */
export class UsageError extends Error {}
