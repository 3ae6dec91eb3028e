import { VERSION } from './version.js';

/** `rz token …` (contract §14.7): printed by `rz token --help` and inside the full usage. */
export const TOKEN_USAGE = `  rz token derive --ttl 15m [--scopes a,b] [--aud svc] [--cidr net] [--label L] [--rate 60/60s] [--stdin]
        a child of the stored token (or of the parent piped in with --stdin), on stdout
  rz token attenuate [--ttl …] [--scopes …] [--aud …] [--cidr …] [--label …] [--rate …]
        the child on stdin, narrowed, on stdout
  rz token inspect [--json]
        the child on stdin, decoded without verifying
`;

export const USAGE = `rz ${VERSION}: log in to rz-auth from a terminal, and derive scoped child tokens offline

Usage:
  rz login [--host URL] [--scopes a,b] [--device-name N] [--no-browser] [--insecure-storage]
  rz login --with-token [--host URL] [--insecure-storage]    (token on stdin)
  rz logout [--host URL]
  rz auth status [--host URL] [--json]
  rz auth token [--host URL]
${TOKEN_USAGE}
Durations: 90s, 15m, 2h, 7d or seconds. --scopes, --aud and --cidr are comma-separated and repeatable.
Every command takes --debug (details on stderr, tokens redacted).
Environment: RZ_HOST, RZ_TOKEN, RZ_INSECURE_STORAGE=1. Exit codes: 0 ok, 1 error, 2 usage,
3 denied, expired or unauthorised, 4 network.
`;
