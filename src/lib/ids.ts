import { randomUUID } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** True for a lower-case hyphenated UUID, the only id form the service issues. */
export const isUuid = (value: string): boolean => UUID.test(value);

/** A random (version 4, RFC 9562 section 5.4) UUID for a request id, from Node's CSPRNG. */
export const requestId = (): string => randomUUID();
