/** A setting the operator must change: the CLI prints its message on one line and exits with 2. */
export class ConfigError extends Error {}
